/**
 * Namespaces in the library (`namespacedPetstore`): each `/ns/{name}/…` a Petstore of its own on
 * memory, SQLite, PostgreSQL and MySQL (when PETSTORE_TEST_POSTGRES_URL and PETSTORE_TEST_MYSQL_URL are set;
 * under CI they must be),
 * its names, its bound, its deletion (no table left behind), its faults drawn apart from the
 * others', and a property test interleaving random requests over several namespaces.
 *
 * Run: node --import tsx --test test/namespaces.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { type FetchHandler, memoryStore, type ResettablePetStore } from '../src/index.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { namespacedPetstore } from '../src/testing.js'
import { seededRandom } from '../src/util/prng.js'
import { assertError, call, KEY } from './helpers/client.js'
import { sqliteHere } from './helpers/sqlite-here.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
const dir = mkdtempSync(join(tmpdir(), 'petstore-namespaces-'))
const closing: ResettablePetStore[] = []
after(async () => {
  for (const store of closing) await store.close?.()
  rmSync(dir, { recursive: true, force: true })
})

const SEED = [{ name: 'Seed', categoryId: 9, status: 'available' as const }]

interface Place {
  name: string
  make: () => ResettablePetStore | Promise<ResettablePetStore>
  /** The rows of a query on the database (its tables, the table of names): what a deletion leaves behind. */
  rows?: (query: string) => Promise<unknown[][]>
  /** The query that lists the database's tables. */
  tablesQuery?: string
  skip?: string | false
}

let files = 0
const schema = `ns_test_${process.pid}`
const PLACES: Place[] = [
  { name: 'memory', make: () => memoryStore({ pets: SEED }) },
  {
    name: 'SQLite',
    make: () => sqliteStore({ path: join(dir, `pets-${++files}.db`) }),
    tablesQuery: "select name from sqlite_master where type = 'table'",
    rows: async (query) => {
      const db = (await sqliteHere()).open(join(dir, `pets-${files}.db`))
      try {
        return db.prepareValues(query).all([]) as unknown[][]
      } finally {
        db.close()
      }
    },
  },
  {
    name: 'PostgreSQL',
    skip: !POSTGRES_URL && !process.env.CI && 'PETSTORE_TEST_POSTGRES_URL not set',
    make: () => postgresStore({ connectionString: POSTGRES_URL as string }, { schema: `${schema}_${++files}` }),
    get tablesQuery() {
      return `select table_name from information_schema.tables where table_schema = '${schema}_${files}'`
    },
    rows: async (query) => {
      const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}_${files}` })
      await client.connect()
      try {
        return (await client.query({ text: query, rowMode: 'array' })).rows
      } finally {
        await client.end()
      }
    },
  },
]

const mysqlDatabases: string[] = []
/** A connection to the server of PETSTORE_TEST_MYSQL_URL, in `database` when given. */
const mysqlOn = (database?: string) => {
  const url = new URL(MYSQL_URL as string)
  if (database !== undefined) url.pathname = `/${database}`
  return mysql.createConnection(url.href)
}
PLACES.push({
  name: 'MySQL',
  skip: !MYSQL_URL && !process.env.CI && 'PETSTORE_TEST_MYSQL_URL not set',
  make: async () => {
    const database = `ns_test_${process.pid}_${++files}`
    mysqlDatabases.push(database)
    const admin = await mysqlOn()
    await admin.query(`create database \`${database}\` character set utf8mb4 collate utf8mb4_bin`)
    await admin.end()
    const url = new URL(MYSQL_URL as string)
    url.pathname = `/${database}`
    return mysqlStore({ uri: url.href })
  },
  get tablesQuery() {
    return `select table_name from information_schema.tables where table_schema = 'ns_test_${process.pid}_${files}'`
  },
  rows: async (query) => {
    const connection = await mysqlOn(`ns_test_${process.pid}_${files}`)
    try {
      const [rows] = await connection.query({ sql: query, rowsAsArray: true })
      return rows as unknown[][]
    } finally {
      await connection.end()
    }
  },
})
if (MYSQL_URL) {
  after(async () => {
    const admin = await mysqlOn()
    for (const database of mysqlDatabases) await admin.query(`drop database if exists \`${database}\``)
    await admin.end()
  })
}

if (POSTGRES_URL) {
  after(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL })
    await client.connect()
    for (let n = 1; n <= files; n++) await client.query(`drop schema if exists "${schema}_${n}" cascade`)
    await client.end()
  })
}

/** A handler over a fresh store of `place`, seeded with {@link SEED}. */
async function handlerOn(place: Place, options: Partial<Parameters<typeof namespacedPetstore>[0]> = {}) {
  const store = await place.make()
  closing.push(store)
  const { seed } = await import('../src/testing.js')
  await seed(store, SEED)
  return { store, handler: namespacedPetstore({ store, keys: [KEY], ...options }) }
}

const create = (handler: FetchHandler, prefix: string, name: string) =>
  call(handler, `${prefix}/v1/pets`, { json: { name, categoryId: 1 } })
const names = async (handler: FetchHandler, prefix: string) =>
  ((await call(handler, `${prefix}/v1/pets?limit=100`)).body as { name: string }[]).map((pet) => pet.name)

for (const place of PLACES) {
  describe(`namespaces on ${place.name}`, { skip: place.skip }, () => {
    test('each namespace has pets and ids of its own, from the seed', async () => {
      const { handler } = await handlerOn(place)
      const a = await create(handler, '/ns/a', 'in-a')
      assert.equal(a.status, 201)
      assert.equal(a.body.id, 2)
      assert.equal(a.headers.get('location'), '/ns/a/v1/pets/2')
      assert.equal((await create(handler, '/ns/b', 'in-b')).body.id, 2)
      assert.equal((await create(handler, '', 'in-default')).body.id, 2)
      assert.deepEqual(await names(handler, '/ns/a'), ['Seed', 'in-a'])
      assert.deepEqual(await names(handler, '/ns/b'), ['Seed', 'in-b'])
      assert.deepEqual(await names(handler, ''), ['Seed', 'in-default'])
      assert.equal((await call(handler, '/ns/a/v1/pets/2')).body.name, 'in-a')
    })

    test('a reset resets its namespace alone', async () => {
      const { handler } = await handlerOn(place)
      await create(handler, '/ns/a', 'a1')
      await create(handler, '/ns/b', 'b1')
      await create(handler, '', 'd1')
      assert.equal((await call(handler, '/ns/a/__petstore/reset', { method: 'POST' })).status, 204)
      assert.deepEqual(await names(handler, '/ns/a'), ['Seed'])
      assert.deepEqual(await names(handler, '/ns/b'), ['Seed', 'b1'])
      assert.deepEqual(await names(handler, ''), ['Seed', 'd1'])
      assert.equal((await create(handler, '/ns/a', 'a2')).body.id, 2, 'ids restart as at start')
      assert.equal((await call(handler, '/__petstore/reset', { method: 'POST' })).status, 204)
      assert.deepEqual(await names(handler, ''), ['Seed'])
      assert.deepEqual(await names(handler, '/ns/a'), ['Seed', 'a2'])
    })

    test('past the bound a new namespace is a 507; a deleted one makes room', async () => {
      const { handler } = await handlerOn(place, { maxNamespaces: 2 })
      await create(handler, '/ns/one', 'x')
      await create(handler, '/ns/two', 'y')
      const full = await call(handler, '/ns/three/v1/pets')
      assertError(full, 507, 'too_many_namespaces')
      assert.match(full.body.message, /2 namespaces exist/)
      assert.equal(full.headers.get('x-request-id') !== null, true, 'finished like any answer')
      assertError(
        await call(handler, '/ns/one/__petstore/namespace', { method: 'DELETE', auth: false }),
        401,
        'unauthorized',
      )
      assert.equal((await call(handler, '/ns/one/__petstore/namespace', { method: 'DELETE' })).status, 204)
      assert.equal((await call(handler, '/ns/two/__petstore/namespace', { method: 'DELETE' })).status, 204)
      assert.equal((await call(handler, '/ns/never/__petstore/namespace', { method: 'DELETE' })).status, 204)
      assert.deepEqual(await names(handler, '/ns/three'), ['Seed'])
      assert.deepEqual(await names(handler, '/ns/one'), ['Seed'], 'made again, from the seed')
    })

    test('an Idempotency-Key is scoped to its namespace', async () => {
      const { handler } = await handlerOn(place)
      const keyed = (prefix: string) =>
        call(handler, `${prefix}/v1/pets`, {
          json: { name: 'Kit', categoryId: 1 },
          headers: { 'idempotency-key': 'k-1' },
        })
      const first = await keyed('/ns/a')
      const other = await keyed('/ns/b')
      const again = await keyed('/ns/a')
      assert.equal(first.status, 201)
      assert.equal(other.status, 201)
      assert.equal(other.headers.get('idempotent-replayed'), null, 'another namespace creates its own pet')
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(again.body, first.body)
      assert.deepEqual(await names(handler, '/ns/a'), ['Seed', 'Kit'])
      assert.deepEqual(await names(handler, '/ns/b'), ['Seed', 'Kit'])
      assert.deepEqual(await names(handler, ''), ['Seed'])
    })

    test('a property: random requests over namespaces never see another namespace', async () => {
      const { handler } = await handlerOn(place)
      const random = seededRandom(place.name.length * 7919)
      const spaces = ['', '/ns/p1', '/ns/p2', '/ns/P1', '/ns/p.3']
      const model = new Map(spaces.map((space) => [space, ['Seed']]))
      const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
      for (let step = 0; step < 300; step++) {
        const space = pick(spaces)
        const pets = model.get(space) as string[]
        const roll = random()
        if (roll < 0.45) {
          const name = `${space}#${step}`
          const created = await create(handler, space, name)
          assert.equal(created.status, 201)
          pets.push(name)
          assert.equal(created.body.id, pets.length, `${space}: ids of its own`)
        } else if (roll < 0.75) {
          const id = 1 + Math.floor(random() * (pets.length + 2))
          const got = await call(handler, `${space}/v1/pets/${id}`)
          if (id <= pets.length) assert.equal(got.body.name, pets[id - 1], `${space} pet ${id}`)
          else assert.equal(got.status, 404)
        } else if (roll < 0.92) {
          assert.deepEqual(await names(handler, space), pets, `${space} lists its own pets`)
        } else if (roll < 0.97) {
          assert.equal((await call(handler, `${space}/__petstore/reset`, { method: 'POST' })).status, 204)
          pets.length = 1
        } else if (space !== '') {
          assert.equal((await call(handler, `${space}/__petstore/namespace`, { method: 'DELETE' })).status, 204)
          pets.length = 1
        }
      }
      for (const space of spaces) assert.deepEqual(await names(handler, space), model.get(space))
    })
  })
}

test('a deleted namespace leaves no table and no row behind', async (t) => {
  for (const place of PLACES) {
    const { rows } = place
    if (rows === undefined) continue
    await t.test(place.name, { skip: place.skip }, async () => {
      const { handler } = await handlerOn(place)
      // Read after the store is made: PostgreSQL's names the schema of this store.
      const tablesQuery = place.tablesQuery as string
      const tables = async () =>
        (await rows(tablesQuery)).map(([name]) => String(name)).filter((name) => name.startsWith('petstore_ns'))
      await create(handler, '/ns/gone', 'x')
      await create(handler, '/ns/kept', 'y')
      assert.equal((await tables()).length, 10, 'two namespaces, five tables each')
      assert.deepEqual(await rows('select name from petstore_namespaces order by name'), [['gone'], ['kept']])
      assert.equal((await call(handler, '/ns/gone/__petstore/namespace', { method: 'DELETE' })).status, 204)
      assert.equal((await tables()).length, 5, 'no table of the deleted namespace is left')
      assert.deepEqual(await rows('select name from petstore_namespaces'), [['kept']], 'nor its row')
      assert.deepEqual(await names(handler, '/ns/kept'), ['Seed', 'y'])
    })
  }
})

test('names: 1 to 64 of [A-Za-z0-9._-], anything else a 400', async () => {
  const { handler } = await handlerOn(PLACES[0] as Place)
  for (const bad of ['a!b', 'a%20b', 'x'.repeat(65), 'é']) {
    const answer = await call(handler, `/ns/${bad}/v1/pets`)
    assertError(answer, 400, 'bad_request')
    assert.match(answer.body.message, /1 to 64 characters/)
  }
  assert.equal((await call(handler, `/ns/${'x'.repeat(64)}/v1/pets`)).status, 200)
  assert.equal((await call(handler, '/ns/a-b_c.D9/v1/pets')).status, 200)
  assertError(await call(handler, '/ns/a/v1/pets', { auth: false }), 401, 'unauthorized')
  assertError(await call(handler, '/ns/a/__petstore/namespace'), 405, 'method_not_allowed')
  assertError(await call(handler, '/ns/a/nothing'), 404, 'not_found')
})

test("a namespace's faults are drawn from the seed and its name alone", async () => {
  const faults = { faults: { unavailable: 0.3, 'rate-limited': 0.2 }, seed: 42 }
  /** The faults `count` requests to namespace `name` get, with `noise` requests to others in between. */
  const sequence = async (noise: number) => {
    const { handler } = await handlerOn(PLACES[0] as Place, { faults })
    const seen: string[] = []
    for (let i = 0; i < 30; i++) {
      for (let n = 0; n < noise; n++) await call(handler, `/ns/other-${n}/v1/pets`)
      seen.push((await call(handler, '/ns/mine/v1/pets')).headers.get('petstore-fault') ?? 'none')
    }
    return seen
  }
  const alone = await sequence(0)
  assert.ok(alone.includes('unavailable') && alone.includes('none'), alone.join(' '))
  assert.deepEqual(await sequence(3), alone)
  const defaultFirst = await (async () => {
    const { handler } = await handlerOn(PLACES[0] as Place, { faults })
    const seen: string[] = []
    for (let i = 0; i < 30; i++) seen.push((await call(handler, '/v1/pets')).headers.get('petstore-fault') ?? 'none')
    return seen
  })()
  assert.notDeepEqual(defaultFirst, alone, 'the default namespace draws from the seed itself')
})

test('with journal, each namespace records into its own, cleared by its reset', async () => {
  const { handler } = await handlerOn(PLACES[0] as Place, { journal: { size: 10 } })
  const paths = async (prefix: string) =>
    ((await call(handler, `${prefix}/__petstore/requests`)).body as { requests: { path: string }[] }).requests.map(
      (entry) => entry.path,
    )
  await create(handler, '/ns/a', 'x')
  await create(handler, '/ns/b', 'y')
  await call(handler, '/v1/pets')
  assert.deepEqual(await paths('/ns/a'), ['/ns/a/v1/pets'])
  assert.deepEqual(await paths('/ns/b'), ['/ns/b/v1/pets'])
  assert.deepEqual(await paths(''), ['/v1/pets'])
  assert.equal((await call(handler, '/ns/a/__petstore/reset', { method: 'POST' })).status, 204)
  assert.deepEqual(await paths('/ns/a'), ['/ns/a/__petstore/reset'])
  assert.deepEqual(await paths('/ns/b'), ['/ns/b/v1/pets'])
  const off = await handlerOn(PLACES[0] as Place)
  assertError(await call(off.handler, '/ns/a/__petstore/requests'), 404, 'not_found')
})
