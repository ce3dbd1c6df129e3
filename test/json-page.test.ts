/**
 * Pages written as JSON text by the stores themselves (`Store.page`, which
 * the handler sends as they are) say exactly what `list()` says: on every
 * SQLite driver that loads here, on PostgreSQL's SQL through PGlite, and on a
 * PostgreSQL server when PETSTORE_TEST_POSTGRES_URL is set, and MySQL's (written
 * from rows) when PETSTORE_TEST_MYSQL_URL is. Names that JSON
 * must escape (quotes, backslashes, control characters, U+2028, emoji, 255
 * code points) and ids and categoryIds up to ±(2^53−1) must round-trip.
 * (test/helpers/sqlite-roundtrip.ts runs the same check on Node 22, 24 and Bun.)
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, type KyselyConfig } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import mysql from 'mysql2'
import pg from 'pg'
import { memoryStore } from '../src/index.js'
import { postgresHotPath } from '../src/store/sql/dialects/postgres.js'
import type { HotPathTarget } from '../src/store/sql/hot-path.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { sqlStore } from '../src/store/sql/sql-store.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { AUTO_ORDER, loadSqliteDriver, type SqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { createdTables } from '../src/store/sql/store-options.js'
import { builtInOf, type PetStore } from '../src/store/store.js'
import { assertJsonPagesMatchList, createHardPets, jsonPages } from './helpers/json-page.js'

const MAX = Number.MAX_SAFE_INTEGER
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
const dir = mkdtempSync(join(tmpdir(), 'petstore-json-page-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Pets whose ids are beyond 2^32 and up to 2^53−1, inserted beside the store: `insert(id, name, categoryId, status)`. */
async function addBigIds(insert: (id: number, name: string, categoryId: number, status: string | null) => unknown) {
  await insert(2 ** 32 + 1, 'past 2^32', -MAX, 'sold')
  await insert(2 ** 53 - 2, 'almost the largest', MAX, null)
  await insert(MAX, 'the largest "id"\n', 2 ** 53 - 2, 'available')
}

/** SQLite drivers this process can open a database with. */
const drivers: SqliteDriver[] = []
for (const driver of AUTO_ORDER) {
  try {
    const { open } = await loadSqliteDriver([driver])
    open(':memory:').close()
    drivers.push(driver)
  } catch {
    // Not on this runtime (bun:sqlite outside Bun, node:sqlite before Node 22.13, or better-sqlite3 built for another Node).
  }
}

describe('memoryStore', () => {
  it('is built in, and answers its pages at once, as JSON.stringify of its slice', async () => {
    const store = memoryStore({
      pets: [
        { name: 'Rex "1"', categoryId: 1 },
        { name: 'Tom', categoryId: 2 },
      ],
    })
    const own = builtInOf(store)
    assert.ok(own)
    const page = own.page({ limit: 1 })
    assert.ok(!(page instanceof Promise))
    assert.deepEqual(page, {
      json: JSON.stringify((await store.list({ limit: 1 })).slice(0, 1)),
      lastId: 1,
      more: true,
      generation: 0,
    })
  })
})

describe('sqliteStore pages as JSON', () => {
  for (const driver of drivers) {
    it(`match list() on hard names and int64 category ids (${driver})`, async () => {
      const path = join(dir, `${driver.replace(/\W/g, '-')}.db`)
      const store = sqliteStore({ path, driver })
      try {
        await createHardPets(store)
        const { open } = await loadSqliteDriver([driver])
        const other = open(path)
        try {
          const insert = other.prepare('insert into petstore_pets (id, name, category_id, status) values (?, ?, ?, ?)')
          await addBigIds((...row) => insert.run(row))
        } finally {
          other.close()
        }
        const compared = await assertJsonPagesMatchList(store, { extraCursors: [2 ** 32, MAX - 1, MAX] })
        assert.ok(compared > 300, `compared ${compared} pages`)
      } finally {
        await store.close?.()
      }
    })
  }

  it('answer an empty store, a page past the end and limit 0 with an empty array', async () => {
    const store = sqliteStore({ path: ':memory:' })
    try {
      const pages = jsonPages(store)
      assert.deepEqual(await pages({ limit: 20 }), { json: '[]', lastId: undefined, more: false, generation: 0 })
      const pet = await store.create({ name: 'Rex', categoryId: 1 })
      assert.deepEqual(await pages({ limit: 20, after: pet.id }), {
        json: '[]',
        lastId: undefined,
        more: false,
        generation: 0,
      })
      assert.deepEqual(await pages({ limit: 0 }), {
        json: '[]',
        lastId: undefined,
        more: false,
        generation: undefined,
      })
      assert.deepEqual(await pages({ limit: 1 }), {
        json: JSON.stringify([pet]),
        lastId: pet.id,
        more: false,
        generation: 0,
      })
    } finally {
      await store.close?.()
    }
  })

  it('are refused after close(), like every other call', async () => {
    const store = sqliteStore({ path: ':memory:' })
    await store.create({ name: 'Rex', categoryId: 1 })
    await store.close?.()
    await assert.rejects(jsonPages(store)({ limit: 1 }))
    await assert.rejects(store.get(1))
  })
})

/** Names no other run uses. */
const run = randomBytes(4).toString('hex')
let count = 0
const freshName = () => `petstore_j_${run}_${count++}`

describe('PostgreSQL pages as JSON, on PGlite', () => {
  const pglite = new PGlite()
  const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) } satisfies KyselyConfig)
  after(() => pglite.close())

  /** kyselyStore on PGlite with postgresStore's hot path, its statements run by PGlite (unnamed: PGlite has no pool). */
  function pgliteHotStore(table: string): PetStore {
    return sqlStore(db, { table }, (target: HotPathTarget) =>
      postgresHotPath(({ text, values }) => pglite.query(text, values) as Promise<{ rows: unknown[] }>, target),
    )
  }

  it('match list() on hard names and int64 category ids', async () => {
    const table = freshName()
    const store = pgliteHotStore(table)
    await createHardPets(store)
    await addBigIds((...row) =>
      pglite.query(`insert into ${table} (id, name, category_id, status) values ($1, $2, $3, $4)`, row),
    )
    const compared = await assertJsonPagesMatchList(store, { limits: [2, 100], extraCursors: [MAX - 1] })
    assert.ok(compared > 150, `compared ${compared} pages`)
  })

  it('the hot path creates, gets and lists as kysely did', async () => {
    const store = pgliteHotStore(freshName())
    const rex = await store.create({ name: 'Rex', categoryId: -MAX, status: 'sold' })
    const tom = await store.create({ name: 'Tom', categoryId: MAX })
    assert.deepEqual(tom, { id: rex.id + 1, name: 'Tom', categoryId: MAX })
    assert.deepEqual(await store.get(rex.id), rex)
    assert.equal(await store.get(tom.id + 1), undefined)
    assert.deepEqual(await store.list({ limit: 5 }), [rex, tom])
    assert.deepEqual(await store.list({ limit: 5, status: 'sold' }), [rex])
  })
})

describe('postgresStore pages as JSON, on a PostgreSQL server', {
  skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
}, () => {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 })
  const schemas: string[] = []
  after(async () => {
    for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  it('match list() on hard names and int64 category ids', async () => {
    const schema = freshName()
    schemas.push(schema)
    const store = postgresStore({ connectionString: POSTGRES_URL ?? '' }, { schema })
    try {
      await createHardPets(store)
      await addBigIds((...row) =>
        admin.query(`insert into ${schema}.petstore_pets (id, name, category_id, status) values ($1, $2, $3, $4)`, row),
      )
      const compared = await assertJsonPagesMatchList(store, { extraCursors: [2 ** 32, MAX - 1] })
      assert.ok(compared > 300, `compared ${compared} pages`)
    } finally {
      await store.close?.()
    }
  })

  it('two stores on one pool, on tables of different schemas, keep their statements apart', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 })
    const [a, b] = [freshName(), freshName()]
    schemas.push(a, b)
    const stores = [postgresStore({ pool }, { schema: a }), postgresStore({ pool }, { schema: b })]
    try {
      const [inA, inB] = [
        await stores[0]!.create({ name: 'in a', categoryId: 1 }),
        await stores[1]!.create({ name: 'in b', categoryId: 2 }),
      ]
      assert.deepEqual(await stores[0]!.list({ limit: 5 }), [inA])
      assert.deepEqual(await stores[1]!.list({ limit: 5 }), [inB])
      assert.equal((await jsonPages(stores[1]!)({ limit: 5 })).json, JSON.stringify([inB]))
    } finally {
      for (const store of stores) await store.close?.()
      await pool.end()
    }
  })
})

describe('mysqlStore pages, on a MySQL or MariaDB server', {
  skip: !MYSQL_URL && 'PETSTORE_TEST_MYSQL_URL not set',
}, () => {
  const admin = mysql.createPool({ uri: MYSQL_URL ?? '', connectionLimit: 1, supportBigNumbers: true }).promise()
  const tables: string[] = []
  after(async () => {
    if (tables.length > 0) await admin.query(`drop table if exists ${tables.join(', ')}`)
    await admin.end()
  })

  it('match list() on hard names and int64 category ids (rows written as JSON by the store)', async () => {
    const table = freshName()
    tables.push(...createdTables(table, `${table}_migration`))
    const store = mysqlStore({ uri: MYSQL_URL ?? '' }, { table })
    try {
      await createHardPets(store)
      await addBigIds((...row) =>
        admin.query(`insert into ${table} (id, name, category_id, status) values (?, ?, ?, ?)`, row),
      )
      const compared = await assertJsonPagesMatchList(store, { extraCursors: [2 ** 32, MAX - 1] })
      assert.ok(compared > 300, `compared ${compared} pages`)
    } finally {
      await store.close?.()
    }
  })
})
