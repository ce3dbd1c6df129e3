/**
 * Issue 64, `Idempotency-Key` on createPet: the shared cases (idempotency.suite.ts) on every store
 * of this process (memory, a store of your own, SQLite on two drivers, kysely, PostgreSQL, MySQL or
 * MariaDB when their URLs are set), and what only some show: a replay after a restart, expired keys
 * swept, a reset that forgets keys, a 409 while the first create runs.
 *
 * Run: node --import tsx --test test/idempotency.test.ts
 * (PETSTORE_TEST_POSTGRES_URL, PETSTORE_TEST_MYSQL_URL for the servers)
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely'
import mysql from 'mysql2'
import pg from 'pg'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { kyselyStore } from '../src/store/sql/kysely.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { createdTables } from '../src/store/sql/store-options.js'
import { seed } from '../src/testing.js'
import { opensHere, sqliteHere } from './helpers/sqlite-here.js'
import { count, post, runKeyedSuite, servingStore } from './idempotency.suite.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
const runner = { describe, it }

/** Names no other run uses: `idem_<run>_<n>`. */
const run = randomBytes(4).toString('hex')
let named = 0
const freshName = () => `idem_${run}_${named++}`

const dir = mkdtempSync(join(tmpdir(), 'petstore-idempotency-'))
const cleanups: Array<() => Promise<unknown>> = []
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  rmSync(dir, { recursive: true, force: true })
})
const freshFile = () => join(dir, `${freshName()}.db`)

runKeyedSuite('memoryStore', { ...runner, serve: servingStore(() => memoryStore()) })
// A copy of a built-in store is a PetStore of your own: its keys are kept in process memory.
runKeyedSuite('a PetStore of your own', { ...runner, serve: servingStore(() => ({ ...memoryStore() })) })
// bun:sqlite runs under Bun: test/runtimes.test.ts serves the API there. node:sqlite needs Node ≥ 22.13.
for (const driver of ['node:sqlite', 'better-sqlite3'] as const) {
  // better-sqlite3 loads on Node 22 and 24 but cannot open a database there (its addon is Node 20's).
  if (!(await opensHere(driver))) {
    it(`sqliteStore (${driver})`, { skip: `${driver} cannot open a database on this runtime` }, () => {})
  } else
    runKeyedSuite(`sqliteStore (${driver})`, {
      ...runner,
      serve: servingStore(() => sqliteStore({ path: freshFile(), driver })),
    })
}
const sqlite = await sqliteHere()
runKeyedSuite('kyselyStore (SQLite)', {
  ...runner,
  serve: servingStore(() => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite.open(freshFile()) }) })
    return kyselyStore(db, { table: freshName(), destroyOnClose: true })
  }),
})

if (POSTGRES_URL) {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 })
  const schemas: string[] = []
  const freshSchema = () => {
    const schema = freshName()
    schemas.push(schema)
    return schema
  }
  cleanups.push(async () => {
    for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })
  runKeyedSuite('postgresStore', {
    ...runner,
    serve: servingStore(() => postgresStore({ connectionString: POSTGRES_URL }, { schema: freshSchema() })),
  })
  runKeyedSuite('kyselyStore (PostgreSQL)', {
    ...runner,
    serve: servingStore(() => {
      const db = new Kysely<any>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: POSTGRES_URL }) }),
      })
      return kyselyStore(db, { schema: freshSchema(), destroyOnClose: true })
    }),
  })
  it('PostgreSQL: a retry after a restart replays the pet of before it', async () => {
    const schema = freshSchema()
    await replaysAfterRestart(() => postgresStore({ connectionString: POSTGRES_URL }, { schema }))
  })
} else {
  it('PostgreSQL', { skip: 'PETSTORE_TEST_POSTGRES_URL is not set' }, () => {})
}

if (MYSQL_URL) {
  const tables: string[] = []
  const freshTable = () => {
    const table = freshName()
    tables.push(table)
    return table
  }
  cleanups.push(async () => {
    const connection = mysql.createConnection(MYSQL_URL).promise()
    for (const table of tables) {
      for (const created of createdTables(table, `${table}_migration`)) {
        await connection.query(`drop table if exists \`${created}\``)
      }
    }
    await connection.end()
  })
  runKeyedSuite('mysqlStore', {
    ...runner,
    serve: servingStore(() => mysqlStore({ uri: MYSQL_URL }, { table: freshTable() })),
  })
  runKeyedSuite('kyselyStore (MySQL)', {
    ...runner,
    serve: servingStore(() => {
      const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: mysql.createPool({ uri: MYSQL_URL }) }) })
      return kyselyStore(db, { table: freshTable(), destroyOnClose: true })
    }),
  })
} else {
  it('MySQL', { skip: 'PETSTORE_TEST_MYSQL_URL is not set' }, () => {})
}

/** A keyed create on one store, that store closed, and the retry on a new one over the same database. */
async function replaysAfterRestart(open: () => PetStore): Promise<void> {
  const before = open()
  const first = await post(createPetstore({ store: before, keys: ['first-key'] }), { name: 'Rex', categoryId: 1 }, 'r')
  assert.equal(first.status, 201)
  await before.close?.()
  const after = open()
  try {
    const handler = createPetstore({ store: after, keys: ['first-key'] })
    const retry = await post(handler, { name: 'Rex', categoryId: 1 }, 'r')
    assert.equal(retry.status, 201)
    assert.equal(retry.headers.get('idempotent-replayed'), 'true')
    assert.equal(await retry.text(), await first.text())
    assert.equal(await count(handler), 1)
  } finally {
    await after.close?.()
  }
}

describe('Idempotency-Key: what only some stores show', () => {
  it('SQLite: a retry after a restart replays the pet of before it', async () => {
    const path = freshFile()
    await replaysAfterRestart(() => sqliteStore({ path }))
  })

  it('SQLite: expired keys are deleted by a keyed create, not left to pile up', async () => {
    const path = freshFile()
    const before = sqliteStore({ path })
    const handler = createPetstore({ store: before, keys: ['first-key'], idempotencyTtl: 1 })
    for (const key of ['a', 'b', 'c'])
      assert.equal((await post(handler, { name: key, categoryId: 1 }, key)).status, 201)
    await before.close?.()
    // A new store sweeps at its first keyed create (then once a minute at most).
    const again = sqliteStore({ path })
    try {
      await post(createPetstore({ store: again, keys: ['first-key'] }), { name: 'd', categoryId: 1 }, 'd')
      const db = sqlite.open(path)
      const keys = db
        .prepareValues('select key from petstore_pets_idem_keys')
        .all([])
        .map(([key]) => key)
      db.close()
      assert.deepEqual(keys, ['d'])
    } finally {
      await again.close?.()
    }
  })

  for (const [name, open] of [
    ['memoryStore', () => memoryStore()],
    ['sqliteStore', () => sqliteStore({ path: freshFile() })],
  ] as const) {
    it(`${name}: a reset forgets the keys with the pets`, async () => {
      const store = open()
      try {
        await seed(store, [{ name: 'Seeded', categoryId: 1 }])
        const handler = createPetstore({ store, keys: ['first-key'] })
        assert.equal((await post(handler, { name: 'Rex', categoryId: 1 }, 'k')).status, 201)
        await store.reset()
        const again = await post(handler, { name: 'Rex', categoryId: 1 }, 'k')
        assert.equal(again.status, 201)
        assert.equal(again.headers.get('idempotent-replayed'), null)
        assert.equal(await count(handler), 2)
      } finally {
        await store.close?.()
      }
    })
  }

  it('a retry while the first create still runs waits for it, then is a 409', async () => {
    const inner = memoryStore()
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow: PetStore = {
      ...inner,
      create: async (pet) => {
        await held
        return inner.create(pet)
      },
    }
    // The wait is half the request timeout, at most 10 s: 100 ms here.
    const handler = createPetstore({ store: slow, keys: ['first-key'], requestTimeout: 200 })
    const first = post(handler, { name: 'Slow', categoryId: 1 }, 'busy')
    const second = await post(handler, { name: 'Slow', categoryId: 1 }, 'busy')
    assert.equal(second.status, 409)
    assert.equal(((await second.json()) as { code: string }).code, 'idempotency_key_in_use')
    release()
    assert.equal((await first).status, 201)
    const third = await post(handler, { name: 'Slow', categoryId: 1 }, 'busy')
    assert.equal(third.headers.get('idempotent-replayed'), 'true')
  })

  it('createPetstore refuses an idempotencyTtl that is no whole number of ms from 1', () => {
    for (const idempotencyTtl of [0, -1, 1.5, Number.NaN, 400 * 24 * 3600 * 1000]) {
      assert.throws(
        () => createPetstore({ store: memoryStore(), keys: ['k'], idempotencyTtl }),
        /idempotencyTtl must be a whole number from 1 to 31622400000/,
      )
    }
  })
})
