/**
 * The store factories refuse bad options when they are called: a `TypeError`
 * naming the factory and the option, one line, where the store once went on
 * silently (a throwaway SQLite database, a timeout of 1 ms or none) or failed
 * every request with a 500. Each refusal here passed without a word before.
 * What needs a database server is in sql-stores.test.ts; nothing here
 * connects to one (a pool is made, never used).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Kysely, PostgresDialect } from 'kysely'
import mysql from 'mysql2'
import mysqlPromise from 'mysql2/promise'
import pg from 'pg'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { type D1Database, d1Store } from '../src/store/sql/d1.js'
import { kyselyStore } from '../src/store/sql/kysely.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { AUTH, KEY } from './helpers/client.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-store-options-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `${files++}.db`)

/** Calls `make` as JavaScript would, types aside. */
type Untyped = (...args: any[]) => PetStore

/** Asserts that `make` throws a TypeError with exactly `message`. */
function refuses(make: () => unknown, message: string): void {
  assert.throws(make, (error: unknown) => {
    assert.ok(error instanceof TypeError, `a TypeError, got ${String(error)}`)
    assert.equal(error.message, message)
    assert.doesNotMatch(error.message, /\n/, 'one line')
    return true
  })
}

/** Stores made by a test, closed at the end (none of them connects to a server). */
const made: PetStore[] = []
after(async () => {
  for (const store of made) await store.close?.()
})
function accepts(make: () => PetStore): PetStore {
  const store = make()
  made.push(store)
  return store
}

describe('memoryStore', () => {
  const memory = memoryStore as Untyped

  it('refuses options that are not an object, and unknown option names', () => {
    refuses(
      () => memory('x'),
      `memoryStore: options must be an object such as { pets: [{ name: 'Rex', categoryId: 1 }] }, got a string`,
    )
    refuses(() => memory({ pet: [] }), 'memoryStore: unknown option "pet" (did you mean "pets"?)')
  })

  it('refuses pets that are not an array, and entries that are not pets', () => {
    refuses(() => memory({ pets: 'x' }), 'memoryStore: pets must be an array of pets, got "x"')
    refuses(() => memory({ pets: { name: 'Rex' } }), 'memoryStore: pets must be an array of pets, got an object')
    refuses(
      () => memory({ pets: [null] }),
      'memoryStore: pets[0] must be a pet, { name, categoryId, status? }, got null',
    )
    refuses(
      () => memory({ pets: [{ name: 'Rex', categoryId: 1 }, 7] }),
      'memoryStore: pets[1] must be a pet, { name, categoryId, status? }, got 7',
    )
  })

  it('checks each seeded pet as the API checks a new one, naming the pet and the field', () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'pets[0].name: is required'],
      [{ name: 'Rex' }, 'pets[0].categoryId: is required'],
      [{ name: 'Rex', categoryId: Number.NaN }, 'pets[0].categoryId: must be an integer'],
      [{ name: 'Rex', categoryId: 1.5 }, 'pets[0].categoryId: must be an integer'],
      [{ name: 'Rex', categoryId: '1' }, 'pets[0].categoryId: must be an integer'],
      [
        { name: 'Rex', categoryId: 2 ** 60 },
        'pets[0].categoryId: must be a bigint beyond ±(2^53−1): a number there is not exact',
      ],
      [{ name: 'Rex', categoryId: 2n ** 63n }, 'pets[0].categoryId: must be at most 9223372036854775807'],
      [{ name: '', categoryId: 1 }, 'pets[0].name: must be 1 to 255 characters long'],
      [{ name: 'x'.repeat(256), categoryId: 1 }, 'pets[0].name: must be 1 to 255 characters long'],
      [{ name: '   ', categoryId: 1 }, 'pets[0].name: must not be only whitespace'],
      [{ name: 'Rex\uD800', categoryId: 1 }, 'pets[0].name: must be valid Unicode text'],
      [{ name: 'Rex', categoryId: 1, status: 'lost' }, 'pets[0].status: must be one of available, pending, sold'],
    ]
    for (const [pet, message] of cases) refuses(() => memory({ pets: [pet] }), `memoryStore: ${message}`)
    // The index is the pet's place in `pets`, whether it has an id or not.
    refuses(
      () =>
        memory({
          pets: [
            { id: 9, name: 'Rex', categoryId: 1 },
            { id: 3, name: 'Tom' },
          ],
        }),
      'memoryStore: pets[1].categoryId: is required',
    )
  })

  it('keeps the id checks', () => {
    refuses(
      () => memory({ pets: [{ id: '3', name: 'Rex', categoryId: 1 }] }),
      'memoryStore: seeded pet ids must be unique positive integers, got "3"',
    )
  })

  it('serves seeded pets as the API serves created ones: a bigint within ±(2^53−1) as a number, extra keys dropped', async () => {
    const store = memory({
      pets: [
        { name: 'Small', categoryId: 7n, status: 'sold' },
        { name: 'Big', categoryId: 2n ** 60n },
        { name: 'Extra', categoryId: 3, color: 'red' },
      ],
    })
    assert.deepEqual(await store.list({ limit: 10 }), [
      { id: 1, name: 'Small', categoryId: 7, status: 'sold' },
      { id: 2, name: 'Big', categoryId: 2n ** 60n },
      { id: 3, name: 'Extra', categoryId: 3 },
    ])
    const handler = createPetstore({ store, keys: [KEY] })
    const response = await handler(new Request('http://x/v1/pets', { headers: AUTH }))
    assert.equal(
      await response.text(),
      '[{"id":1,"name":"Small","categoryId":7,"status":"sold"},{"id":2,"name":"Big","categoryId":1152921504606846976},{"id":3,"name":"Extra","categoryId":3}]',
    )
  })
})

describe('sqliteStore', () => {
  const sqlite = sqliteStore as Untyped

  it('needs an object with a path: a string, nothing, or an empty or null path are refused', () => {
    refuses(() => sqlite('./pets.db'), 'sqliteStore: pass { path: "./pets.db" }, not the path alone')
    refuses(() => sqlite(), `sqliteStore: options must be an object such as { path: './pets.db' }, got undefined`)
    refuses(() => sqlite(null), `sqliteStore: options must be an object such as { path: './pets.db' }, got null`)
    for (const options of [{}, { path: '' }, { path: null }, { driver: 'better-sqlite3' }]) {
      refuses(() => sqlite(options), "sqliteStore: path is required: a file path, or ':memory:'")
    }
    refuses(() => sqlite({ path: 5 }), "sqliteStore: path must be a string (a file path, or ':memory:'), got 5")
  })

  it('refuses unknown option names, and schema', () => {
    refuses(() => sqlite({ filename: './pets.db' }), 'sqliteStore: unknown option "filename" (did you mean "path"?)')
    refuses(() => sqlite({ database: './pets.db' }), 'sqliteStore: unknown option "database" (did you mean "path"?)')
    refuses(
      () => sqlite({ path: ':memory:', busyTimeout: 100 }),
      'sqliteStore: unknown option "busyTimeout" (did you mean "busyTimeoutMs"?)',
    )
    refuses(
      () => sqlite({ path: ':memory:', schema: 'main' }),
      'sqliteStore: unknown option "schema": a SQLite file has no schemas, its path is the place',
    )
    refuses(
      () => sqlite({ path: ':memory:', destroyOnClose: false }),
      'sqliteStore: unknown option "destroyOnClose"; known: path, busyTimeoutMs, driver, table, migrationTable, batchCreates',
    )
    refuses(
      () => sqlite({ path: ':memory:', batchCreates: 'false' }),
      'sqliteStore: batchCreates must be true or false, got "false"',
    )
  })

  it('takes busyTimeoutMs as a whole number from 0 to 2147483647 (beyond, SQLite used 0)', () => {
    for (const value of [Number.POSITIVE_INFINITY, Number.NaN, -1, 1.5, 1e12, 2 ** 31, '5000', null]) {
      refuses(
        () => sqlite({ path: ':memory:', busyTimeoutMs: value }),
        `sqliteStore: busyTimeoutMs must be a whole number from 0 to 2147483647, got ${typeof value === 'string' ? `"${value}"` : value}`,
      )
    }
    for (const busyTimeoutMs of [0, 2_147_483_647]) accepts(() => sqliteStore({ path: ':memory:', busyTimeoutMs }))
  })

  it('busyTimeoutMs: 2147483647, the largest taken, waits for the lock of another process', async () => {
    const path = freshFile()
    const store = accepts(() => sqliteStore({ path, busyTimeoutMs: 2_147_483_647 }))
    await store.ping?.()
    // Another process, as SQLite waits for the lock synchronously: holds the write lock for 300 ms.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        // The runtime's own SQLite where it has one: better-sqlite3's addon is built for one Node only.
        `let db; try { db = new (require('node:sqlite').DatabaseSync)(${JSON.stringify(path)}) }
         catch { db = new (require('better-sqlite3'))(${JSON.stringify(path)}) }
         db.exec('begin immediate'); process.stdout.write('locked\\n'); setTimeout(() => db.exec('commit'), 300)`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const [locked] = await once(holder.stdout, 'data')
    assert.equal(String(locked), 'locked\n')
    const started = performance.now()
    const pet = await store.create({ name: 'Rex', categoryId: 1 })
    assert.ok(performance.now() - started >= 200, 'the create waited for the lock')
    assert.deepEqual(await store.get(pet.id), pet)
    await once(holder, 'exit')
  })
})

describe('table, migrationTable and schema (every SQL store)', () => {
  const sqlite = (options: object) => (sqliteStore as Untyped)({ path: ':memory:', ...options })
  const ascii = (bytes: number) => 'p'.repeat(bytes)

  it('must be non-empty strings', () => {
    refuses(() => sqlite({ table: 5 }), 'sqliteStore: table must be a non-empty string, got 5')
    refuses(() => sqlite({ table: '' }), 'sqliteStore: table must be a non-empty string, got ""')
    refuses(() => sqlite({ table: null }), 'sqliteStore: table must be a non-empty string, got null')
    refuses(() => sqlite({ migrationTable: '' }), 'sqliteStore: migrationTable must be a non-empty string, got ""')
    refuses(
      () => postgresStore({ connectionString: 'postgres://u@127.0.0.1:1/x' }, { schema: '' }),
      'postgresStore: schema must be a non-empty string, got ""',
    )
  })

  it('must be names without "." (kysely would read a schema in it, the statements would not)', () => {
    refuses(() => sqlite({ table: 'app.pets' }), 'sqliteStore: table must be a name without ".", got "app.pets"')
    refuses(
      () => sqlite({ migrationTable: 'app.migrations' }),
      'sqliteStore: migrationTable must be a name without ".", got "app.migrations"',
    )
  })

  it('must not name one table twice (case aside, as SQLite and MySQL take names)', () => {
    refuses(
      () => sqlite({ table: 'pets', migrationTable: 'pets' }),
      'sqliteStore: migrationTable must name another table than table, got "pets" for both',
    )
    refuses(
      () => sqlite({ table: 'pets', migrationTable: 'Pets' }),
      'sqliteStore: migrationTable must name another table than table, got "Pets" and "pets"',
    )
    refuses(
      () => sqlite({ table: 'pets_lock', migrationTable: 'pets' }),
      'sqliteStore: table "pets_lock" and migrationTable "pets" would both create "pets_lock"',
    )
  })

  it('are bounded so that every name made of them fits in 63 bytes of UTF-8', () => {
    // <table>_migration_lock: 15 bytes more than the table.
    accepts(() => sqlite({ table: ascii(48) }))
    refuses(
      () => sqlite({ table: ascii(49) }),
      'sqliteStore: table must be at most 48 bytes of UTF-8, got 49: its migration lock table, <table>_migration_lock, must fit in the 63 bytes PostgreSQL keeps of a name (or name a shorter migrationTable)',
    )
    // Bytes, not characters: é is two.
    accepts(() => sqlite({ table: 'é'.repeat(24) }))
    refuses(
      () => sqlite({ table: 'é'.repeat(25) }),
      'sqliteStore: table must be at most 48 bytes of UTF-8, got 50: its migration lock table, <table>_migration_lock, must fit in the 63 bytes PostgreSQL keeps of a name (or name a shorter migrationTable)',
    )
    // With a migration table of its own: <table>_status_id, 10 bytes more, and <migrationTable>_lock, 5.
    accepts(() => sqlite({ table: ascii(53), migrationTable: `m${ascii(57)}` }))
    refuses(
      () => sqlite({ table: ascii(54), migrationTable: 'm' }),
      'sqliteStore: table must be at most 53 bytes of UTF-8, got 54: its index, <table>_status_id, must fit in the 63 bytes PostgreSQL keeps of a name',
    )
    refuses(
      () => sqlite({ migrationTable: `m${ascii(58)}` }),
      'sqliteStore: migrationTable must be at most 58 bytes of UTF-8, got 59: its lock table, <migrationTable>_lock, must fit in the 63 bytes PostgreSQL keeps of a name',
    )
    const connection = { connectionString: 'postgres://u@127.0.0.1:1/x' }
    accepts(() => postgresStore(connection, { schema: ascii(63) }))
    refuses(
      () => postgresStore(connection, { schema: ascii(64) }),
      'postgresStore: schema must be at most 63 bytes of UTF-8, got 64: PostgreSQL keeps 63 bytes of a name',
    )
  })

  it('a table at the bounds works on SQLite, with its migration table', async () => {
    const store = accepts(() => sqliteStore({ path: freshFile(), table: ascii(53), migrationTable: `m${ascii(57)}` }))
    const pet = await store.create({ name: 'Rex', categoryId: 1 })
    assert.deepEqual(await store.get(pet.id), pet)
  })
})

describe('kyselyStore', () => {
  const db = new Kysely<any>({
    dialect: new PostgresDialect({
      pool: async () => {
        throw new Error('these tests never connect')
      },
    }),
  })
  const kysely = kyselyStore as Untyped

  it('needs a Kysely instance', () => {
    refuses(() => kysely(), 'kyselyStore: pass a Kysely instance (new Kysely({ dialect })), got undefined')
    refuses(
      () => kysely({ dialect: {} }),
      'kyselyStore: pass a Kysely instance (new Kysely({ dialect })), got an object',
    )
  })

  it('refuses unknown option names and flags that are not booleans', () => {
    refuses(() => kysely(db, 'pets'), `kyselyStore: options must be an object such as { table: 'pets' }, got a string`)
    refuses(() => kysely(db, { tabel: 'pets' }), 'kyselyStore: unknown option "tabel" (did you mean "table"?)')
    refuses(() => kysely(db, { destroyOnClose: 'yes' }), 'kyselyStore: destroyOnClose must be true or false, got "yes"')
    refuses(() => kysely(db, { batchCreates: 0 }), 'kyselyStore: batchCreates must be true or false, got 0')
    refuses(() => kysely(db, { table: 'a.b' }), 'kyselyStore: table must be a name without ".", got "a.b"')
    accepts(() => kyselyStore(db, { table: 'pets', migrationTable: 'pets_m', schema: 's', batchCreates: false }))
  })
})

describe('postgresStore', () => {
  const postgres = postgresStore as Untyped
  const connectionString = 'postgres://app:secret-pw@127.0.0.1:1/x'

  it('refuses a URL given alone, without showing it', () => {
    refuses(() => postgres(connectionString), "postgresStore: pass { connectionString: '…' }, not the URL alone")
    refuses(
      () => postgres(),
      "postgresStore: the connection must be an object such as { connectionString: 'postgres://…' } or { pool }, got undefined",
    )
  })

  it('suggests connectionString for url or uri', () => {
    refuses(
      () => postgres({ url: connectionString }),
      'postgresStore: unknown option "url" (did you mean "connectionString"?)',
    )
    refuses(
      () => postgres({ uri: connectionString }),
      'postgresStore: unknown option "uri" (did you mean "connectionString"?)',
    )
    refuses(() => postgres({ connectionString: 5 }), 'postgresStore: connectionString must be a string, got a number')
  })

  it('refuses connectionString misspelt, empty or not a PostgreSQL URL (pg connected to its default database)', () => {
    for (const name of ['connectionstring', 'connection_string', 'ConnectionString']) {
      refuses(
        () => postgres({ [name]: connectionString }),
        `postgresStore: unknown option "${name}" (did you mean "connectionString"?)`,
      )
    }
    const must = 'postgresStore: connectionString must begin with postgres:// or postgresql:// or socket: or /, got'
    refuses(() => postgres({ connectionString: '' }), `${must} an empty string`)
    refuses(() => postgres({ connectionString: 'not a url' }), `${must} a string that is no URL`)
    refuses(() => postgres({ connectionString: 'mysql://root:pw@127.0.0.1/x' }), `${must} a URL of mysql:`)
    accepts(() => postgresStore({ connectionString: 'postgresql://127.0.0.1/x' }))
    accepts(() => postgresStore({ connectionString: '/var/run/postgresql x' }))
  })

  it("accepts an empty config (pg's environment variables) and pg's settings beside the URL", () => {
    accepts(() => postgresStore({} as never))
    accepts(() => postgresStore({ connectionString, max: 3, application_name: 'x', statement_timeout: false }))
    accepts(() =>
      postgresStore({ connectionString, connectionTimeoutMillis: 0, query_timeout: 0, statement_timeout: 0 }),
    )
  })

  it('takes the timeouts it sets as whole numbers of ms from 0 to 2147483647', () => {
    for (const name of ['connectionTimeoutMillis', 'statement_timeout', 'query_timeout']) {
      for (const value of [Number.POSITIVE_INFINITY, Number.NaN, -1, 1.5, 2 ** 31, '100']) {
        refuses(
          () => postgres({ connectionString, [name]: value }),
          `postgresStore: ${name} must be a whole number from 0 to 2147483647, got ${typeof value === 'string' ? `"${value}"` : value}`,
        )
      }
      accepts(() => postgresStore({ connectionString, [name]: 2_147_483_647 }))
    }
  })

  it('takes a pool with the methods the store calls, and nothing beside it', async () => {
    refuses(
      () => postgres({ pool: {} }),
      'postgresStore: pool must be a pg.Pool, with connect() and query(), got an object',
    )
    refuses(
      () => postgres({ pool: null }),
      'postgresStore: pool must be a pg.Pool, with connect() and query(), got null',
    )
    refuses(
      () => postgres({ pool: new pg.Client({ connectionString }) }),
      'postgresStore: pool is a pg.Client, one connection: pass a pg.Pool',
    )
    const pool = new pg.Pool({ connectionString })
    try {
      refuses(
        () => postgres({ pool, max: 20 }),
        'postgresStore: a connection with a pool takes nothing else, got "max": set it on the pool',
      )
      accepts(() => postgresStore({ pool }))
    } finally {
      await pool.end()
    }
  })

  it("refuses the store's options in the connection, and unknown ones beside them", () => {
    refuses(
      () => postgres({ connectionString, schema: 'pets' }),
      'postgresStore: schema is an option of the store, not of the connection: postgresStore(connection, { schema })',
    )
    refuses(
      () => postgres({ connectionString }, { queryTimeoutMillis: 1000 }),
      `postgresStore: unknown option "queryTimeoutMillis": pg's timeouts go with the connection, as query_timeout and statement_timeout`,
    )
    refuses(
      () => postgres({ connectionString }, { shema: 'pets' }),
      'postgresStore: unknown option "shema" (did you mean "schema"?)',
    )
    refuses(
      () => postgres({ connectionString }, 'pets'),
      `postgresStore: options must be an object such as { schema: 'pets' }, got a string`,
    )
  })
})

describe('mysqlStore', () => {
  const mysqlStoreOf = mysqlStore as Untyped
  const uri = 'mysql://app:secret-pw@127.0.0.1:1/x'

  it('refuses a URL given alone, and suggests uri for url or connectionString', () => {
    refuses(() => mysqlStoreOf(uri), "mysqlStore: pass { uri: '…' }, not the URL alone")
    refuses(() => mysqlStoreOf({ url: uri }), 'mysqlStore: unknown option "url" (did you mean "uri"?)')
    refuses(
      () => mysqlStoreOf({ connectionString: uri }),
      'mysqlStore: unknown option "connectionString" (did you mean "uri"?)',
    )
    refuses(() => mysqlStoreOf({ uri: new URL(uri) }), 'mysqlStore: uri must be a string, got an object')
    refuses(() => mysqlStoreOf({ URI: uri }), 'mysqlStore: unknown option "URI" (did you mean "uri"?)')
    const must = 'mysqlStore: uri must begin with mysql:// or mariadb://, got'
    refuses(() => mysqlStoreOf({ uri: 'not a url' }), `${must} a string that is no URL`)
    // mysql2 ignores the scheme: this one connected to port 3306 of its host.
    refuses(() => mysqlStoreOf({ uri: 'postgres://root@127.0.0.1/x' }), `${must} a URL of postgres:`)
    refuses(() => mysqlStoreOf({ uri: '' }), `${must} an empty string`)
  })

  it('takes queryTimeoutMillis and connectTimeout as whole numbers of ms from 0 (for ever) to 2147483647', () => {
    for (const value of [Number.POSITIVE_INFINITY, Number.NaN, -1, 1.5, 2 ** 31]) {
      refuses(
        () => mysqlStoreOf({ uri }, { queryTimeoutMillis: value }),
        `mysqlStore: queryTimeoutMillis must be a whole number from 0 to 2147483647, got ${value}`,
      )
      refuses(
        () => mysqlStoreOf({ uri, connectTimeout: value }),
        `mysqlStore: connectTimeout must be a whole number from 0 to 2147483647, got ${value}`,
      )
    }
    for (const value of [0, 2_147_483_647]) {
      accepts(() => mysqlStore({ uri, connectTimeout: value }, { queryTimeoutMillis: value }))
    }
  })

  it('takes a callback pool, refuses a mysql2/promise pool (requests would wait for ever) and anything beside a pool', async () => {
    refuses(
      () => mysqlStoreOf({ pool: {} }),
      'mysqlStore: pool must be a mysql2 pool, with getConnection(), got an object',
    )
    refuses(
      () => mysqlStoreOf({ pool: null }),
      'mysqlStore: pool must be a mysql2 pool, with getConnection(), got null',
    )
    const promisePool = mysqlPromise.createPool({ uri })
    const pool = mysql.createPool({ uri })
    try {
      refuses(
        () => mysqlStoreOf({ pool: promisePool }),
        "mysqlStore: pool is a mysql2/promise pool; pass the callback pool: its .pool, or createPool from 'mysql2'",
      )
      refuses(
        () => mysqlStoreOf({ pool, connectionLimit: 5 }),
        'mysqlStore: a connection with a pool takes nothing else, got "connectionLimit": set it on the pool',
      )
      accepts(() => mysqlStore({ pool }))
      accepts(() => mysqlStore({ pool: promisePool.pool }))
    } finally {
      await promisePool.end()
      await new Promise((resolve) => pool.end(resolve))
    }
  })

  it("refuses the store's options in the connection, and unknown ones", () => {
    refuses(
      () => mysqlStoreOf({ uri, queryTimeoutMillis: 100 }),
      'mysqlStore: queryTimeoutMillis is an option of the store, not of the connection: mysqlStore(connection, { queryTimeoutMillis })',
    )
    refuses(
      () => mysqlStoreOf({ uri }, { queryTimeout: 100 }),
      'mysqlStore: unknown option "queryTimeout" (did you mean "queryTimeoutMillis"?)',
    )
    refuses(
      () => mysqlStoreOf({ uri }, { destroyOnClose: true }),
      'mysqlStore: unknown option "destroyOnClose"; known: table, migrationTable, schema, batchCreates, queryTimeoutMillis',
    )
  })
})

describe('d1Store', () => {
  /** A binding for stores that are made and never used: any query would fail the test. */
  const binding: D1Database = {
    prepare() {
      throw new Error('these tests never query')
    },
    batch() {
      throw new Error('these tests never query')
    },
  }
  const d1 = d1Store as Untyped

  it('refuses unknown option names, and tables as the SQL stores do', () => {
    refuses(() => d1(binding, { tabel: 'pets' }), 'd1Store: unknown option "tabel" (did you mean "table"?)')
    refuses(() => d1(binding, 'pets'), `d1Store: options must be an object such as { table: 'pets' }, got a string`)
    refuses(() => d1(binding, { table: '' }), 'd1Store: table must be a non-empty string, got ""')
    refuses(() => d1(binding, { table: 5 }), 'd1Store: table must be a non-empty string, got 5')
    refuses(
      () => d1(binding, { table: 'p'.repeat(54) }),
      'd1Store: table must be at most 53 bytes of UTF-8, got 54: its index, <table>_status_id, must fit in the 63 bytes PostgreSQL keeps of a name',
    )
    accepts(() => d1Store(binding, { table: 'p'.repeat(53) }))
  })
})
