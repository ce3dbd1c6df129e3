/**
 * The PostgreSQL and MySQL stores on real databases: PGlite (Postgres in
 * WebAssembly) always, a PostgreSQL server when PETSTORE_TEST_POSTGRES_URL is
 * set, MySQL or MariaDB when PETSTORE_TEST_MYSQL_URL is set. Every store gets
 * a schema (Postgres) or tables (MySQL) of its own, dropped at the end, so
 * that parallel runs can share one server.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import mysql from 'mysql2'
import mysqlPromise from 'mysql2/promise'
import pg from 'pg'
import { type PetStore, PetstoreError } from '../src/index.js'
import { isUnavailable, kyselyStore } from '../src/store/sql/kysely.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { createdTables } from '../src/store/sql/store-options.js'
import { storeConformance } from '../src/testing.js'
import { runApiSuite } from './api.suite.js'
import { assertBatchIdsMatchRows, assertOneBadRowFailsAlone, REJECTED_NAME } from './helpers/group-commit.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
const MAX = Number.MAX_SAFE_INTEGER
const runner = { describe, it, before, after }

/** Names no other run uses: `petstore_t_<run>_<n>`. */
const run = randomBytes(4).toString('hex')
let count = 0
const freshName = () => `petstore_t_${run}_${count++}`

/** Closes every store a test opened, even when the test failed. */
const opened: PetStore[] = []
function track<T extends PetStore>(store: T): T {
  opened.push(store)
  return store
}
after(async () => {
  for (const store of opened) await store.close?.()
})

/**
 * 8 writers create 120 pets while a reader walks the list by cursor, again and
 * again: every walk must have seen every pet up to where it ended. (A store
 * that lets id 34 commit before 33 fails this when commits are slowed down.)
 */
async function assertWalksMissNothing(store: PetStore): Promise<void> {
  let writing = true
  const writers = Promise.all(
    Array.from({ length: 8 }, async (_, writer) => {
      for (let i = 0; i < 15; i++) await store.create({ name: `w${writer}-${i}`, categoryId: i })
    }),
  ).finally(() => {
    writing = false
  })
  const walks: number[][] = []
  while (writing) {
    const seen: number[] = []
    for (let page = await store.list({ limit: 3 }); page.length > 0; ) {
      seen.push(...page.map((pet) => pet.id))
      page = await store.list({ limit: 3, after: seen.at(-1) })
    }
    walks.push(seen)
  }
  await writers
  const all = (await store.list({ limit: 1000 })).map((pet) => pet.id)
  assert.equal(all.length, 120)
  for (const seen of walks) {
    const last = seen.at(-1) ?? 0
    assert.deepEqual(
      seen,
      all.filter((id) => id <= last),
      'a walk saw every pet up to where it ended',
    )
  }
  assert.ok(walks.length > 3, `several walks ran during the writes (${walks.length})`)
}

/** A SQL server under test, as the tests both servers share need it. */
interface ServerUnderTest {
  /** The store's factory: `postgresStore`, `mysqlStore`. */
  store: string
  /** `PostgreSQL server`, `MySQL server`. */
  server: string
  /** What a store of its own is kept in: a `schema` (PostgreSQL) or a `table` (MySQL). */
  place: 'schema' | 'table'
  /** A new place, dropped at the end. */
  freshPlace(): string
  /** The server's store in `place`, on a pool of `connections`; closed at the end. */
  open(place: string, connections?: number): PetStore
  /** `kyselyStore` in `place`, over a kysely instance of the application's own. */
  openKysely(place: string): PetStore
  /** A random pause of up to 20 ms in each insert, between its id being drawn and its commit. */
  pauseInserts(place: string): Promise<void>
  /** Makes the database refuse the row of a pet named {@link REJECTED_NAME}. */
  refuse(place: string): Promise<void>
  /** The most rows one transaction wrote in `place`, where the server can tell. */
  largestCommit?(place: string): Promise<number>
}

/** What the PostgreSQL and MySQL stores must both do, on their server. */
function serverStoreTests(server: ServerUnderTest): void {
  const { freshPlace, open, openKysely, pauseInserts, refuse } = server
  const name = `${server.store} (server)`
  runApiSuite(name, () => open(freshPlace()))
  storeConformance({ name, makeStore: () => open(freshPlace()) }, runner)

  /** A store on a pool of 10, in a place of its own, once its table exists. */
  async function migrated(): Promise<{ store: PetStore; place: string }> {
    const place = freshPlace()
    const store = track(open(place, 10))
    await store.ping?.()
    return { store, place }
  }

  it('makes pets visible in id order, so a walk by cursor misses none, even when commits are slow', async () => {
    const { store, place } = await migrated()
    await pauseInserts(place)
    await assertWalksMissNothing(store)
  })

  it('group commit: a row the database refuses fails only its own create, the rest of its batch is stored', async () => {
    const { store, place } = await migrated()
    await refuse(place)
    await assertOneBadRowFailsAlone(store)
    const largest = await server.largestCommit?.(place)
    if (largest !== undefined) assert.ok(largest > 1, `several creates shared a commit (at most ${largest})`)
  })

  it('group commit: a batch gives each create the id of its own row, in the order they were queued', async () => {
    await assertBatchIdsMatchRows((await migrated()).store)
  })

  it(`lets several stores migrate one new ${server.place} at the same moment`, async () => {
    const place = freshPlace()
    const stores = Array.from({ length: 8 }, () => track(open(place, 2)))
    await Promise.all(stores.map((store) => store.ping?.()))
    const pets = await Promise.all(stores.map((store, n) => store.create({ name: `Rex ${n}`, categoryId: n })))
    assert.equal(new Set(pets.map((pet) => pet.id)).size, stores.length)
  })

  describe('kyselyStore over an instance of the application’s own', () => {
    storeConformance({ name: `kyselyStore (${server.server})`, makeStore: () => openKysely(freshPlace()) }, runner)

    it(`makes pets visible in id order, as ${server.store} does: the same insert lock`, async () => {
      const place = freshPlace()
      const store = track(openKysely(place))
      await store.ping?.()
      await pauseInserts(place)
      await assertWalksMissNothing(store)
    })
  })
}

describe('kyselyStore on PGlite', () => {
  const pglite = new PGlite()
  const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) })
  // One PGlite (3 s to start) for all, a table of its own for every store.
  after(() => pglite.close())

  runApiSuite('kyselyStore (PGlite)', () => kyselyStore(db, { table: freshName() }))
  storeConformance(
    {
      name: 'kyselyStore (PGlite)',
      makeStore: () => kyselyStore(db, { table: freshName() }),
      skip: {
        // PGlite stores the U+FEFF (length() says so) but its TextDecoder drops a leading one when reading.
        'names with quotes, emoji and SQL metacharacters round-trip exactly':
          'PGlite 0.4 strips a leading U+FEFF from text it returns; the PostgreSQL server keeps it',
      },
    },
    runner,
  )

  it('creates its schema, and reads ids and categoryIds beyond 2^32 exactly', async () => {
    const schema = freshName()
    const store = kyselyStore(db, { schema })
    const created = await store.create({ name: 'Rex', categoryId: -MAX })
    await pglite.query(`insert into ${schema}.petstore_pets (id, name, category_id) values ($1, 'Big', $2)`, [MAX, MAX])
    assert.deepEqual(await store.get(MAX), { id: MAX, name: 'Big', categoryId: MAX })
    assert.deepEqual(await store.list({ limit: 10, after: 2 ** 32 }), [{ id: MAX, name: 'Big', categoryId: MAX }])
    assert.deepEqual(await store.get(created.id), created)
  })
})

describe('unreachable servers', () => {
  for (const [name, open] of [
    ['postgresStore', () => postgresStore({ connectionString: 'postgres://u:pw@127.0.0.1:1/x' })],
    ['mysqlStore', () => mysqlStore({ uri: 'mysql://u:pw@127.0.0.1:1/x' })],
  ] as const) {
    it(`${name} answers 503 unavailable at once when nothing listens`, async () => {
      const store = track(open())
      for (const attempt of [
        async () => store.ping?.(),
        async () => store.list({ limit: 1 }),
        async () => store.get(1),
      ]) {
        const started = performance.now()
        await assert.rejects(attempt(), (error: unknown) => error instanceof PetstoreError && error.status === 503)
        assert.ok(performance.now() - started < 2000)
      }
    })
  }

  it('isUnavailable knows the driver errors that mean "not there now"', () => {
    const coded = (code: string, extra = {}) => Object.assign(new Error(code), { code, ...extra })
    for (const error of [
      coded('ECONNREFUSED'),
      coded('08006'),
      coded('57P01'),
      coded('PROTOCOL_CONNECTION_LOST', { fatal: true }),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new Error("Can't add new command when connection is in closed state"), { fatal: true }),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
      new Error('wrapped', { cause: coded('ETIMEDOUT') }),
    ]) {
      assert.equal(isUnavailable(error), true, String(error))
    }
    for (const error of [
      new Error('boom'),
      coded('23505'),
      coded('42P01'),
      coded('ER_ACCESS_DENIED_ERROR', { fatal: true }),
      null,
      'ECONNREFUSED',
    ]) {
      assert.equal(isUnavailable(error), false, String(error))
    }
  })
})

describe('postgresStore on a PostgreSQL server', {
  skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
}, () => {
  const connectionString = POSTGRES_URL ?? ''
  const admin = new pg.Pool({ connectionString, max: 2 })
  /** The application's own kysely instance, for kyselyStore. */
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString, max: 10 }) }) })
  const schemas: string[] = []
  /** A schema name that is dropped at the end. */
  function freshSchema(): string {
    const schema = freshName()
    schemas.push(schema)
    return schema
  }
  after(async () => {
    await db.destroy()
    for (const schema of schemas) await admin.query(`drop schema if exists ${schema} cascade`)
    await admin.end()
  })

  serverStoreTests({
    store: 'postgresStore',
    server: 'PostgreSQL server',
    place: 'schema',
    freshPlace: freshSchema,
    open: (schema, max) => postgresStore({ connectionString, max }, { schema }),
    openKysely: (schema) => kyselyStore(db, { schema }),
    async pauseInserts(schema) {
      // The id is drawn before BEFORE triggers run: a random pause there lets concurrent inserts commit out of order.
      await admin.query(`create function ${schema}.pause() returns trigger language plpgsql as
        $$ begin perform pg_sleep(random() * 0.02); return new; end $$`)
      await admin.query(`create trigger pause before insert on ${schema}.petstore_pets
        for each row execute function ${schema}.pause()`)
    },
    async refuse(schema) {
      await admin.query(`alter table ${schema}.petstore_pets add constraint refuse check (name <> '${REJECTED_NAME}')`)
    },
    async largestCommit(schema) {
      // Rows written by one transaction share its xmin.
      const { rows } = await admin.query(
        `select count(*)::int as rows from ${schema}.petstore_pets group by xmin::text order by 1 desc limit 1`,
      )
      return rows[0].rows
    },
  })

  it('leaves a pool it was given open after close(), without listeners of its own', async () => {
    const pool = new pg.Pool({ connectionString, max: 2 })
    try {
      const listeners = pool.listenerCount('error')
      const store = postgresStore({ pool }, { schema: freshSchema() })
      await store.create({ name: 'Rex', categoryId: 1 })
      await store.close?.()
      await store.close?.()
      assert.equal((await pool.query('select 1 as one')).rows[0].one, 1)
      assert.equal(pool.listenerCount('error'), listeners)
    } finally {
      await pool.end()
    }
  })

  it("leaves pg's global int8 parser alone, and round-trips ids and categoryIds beyond 2^32 exactly", async () => {
    const parser = pg.types.getTypeParser(20)
    const schema = freshSchema()
    const store = track(postgresStore({ connectionString }, { schema }))
    await store.ping?.()
    await admin.query(`select setval('${schema}.petstore_pets_id_seq', $1)`, [2 ** 32 + 7])
    const created = await store.create({ name: 'Next', categoryId: MAX, status: 'sold' })
    assert.deepEqual(created, { id: 2 ** 32 + 8, name: 'Next', categoryId: MAX, status: 'sold' })
    await admin.query(`insert into ${schema}.petstore_pets (id, name, category_id) values ($1, 'Big', $2)`, [MAX, -MAX])
    assert.deepEqual(await store.get(MAX), { id: MAX, name: 'Big', categoryId: -MAX })
    assert.deepEqual(
      (await store.list({ limit: 5, after: 2 ** 32 })).map((pet) => pet.id),
      [2 ** 32 + 8, MAX],
    )
    assert.equal(pg.types.getTypeParser(20), parser)
    assert.equal(pg.types.getTypeParser(20)('42'), '42', 'int8 still parses to a string globally')
  })

  it('keeps serving after the server drops its idle connections (no crash on the pool error event)', async () => {
    const application_name = freshName()
    const store = track(postgresStore({ connectionString, application_name }, { schema: freshSchema() }))
    await Promise.all([1, 2, 3].map((n) => store.create({ name: `Rex ${n}`, categoryId: n })))
    const { rowCount } = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
      [application_name],
    )
    assert.ok(rowCount && rowCount > 0, 'the store had connections to drop')
    await new Promise((resolve) => setTimeout(resolve, 100)) // the pool hears of it
    assert.equal((await store.list({ limit: 10 })).length, 3)
  })

  it('answers 503 when a statement outlives the statement timeout or the query timeout', async () => {
    for (const timeouts of [{ statement_timeout: 300 }, { statement_timeout: 0, query_timeout: 300 }]) {
      const schema = freshSchema()
      const store = track(postgresStore({ connectionString, ...timeouts }, { schema }))
      await store.ping?.()
      const locker = await admin.connect()
      try {
        await locker.query('begin')
        await locker.query(`lock table ${schema}.petstore_pets in access exclusive mode`)
        const started = performance.now()
        await assert.rejects(
          store.list({ limit: 1 }),
          (error) => error instanceof PetstoreError && error.status === 503,
        )
        assert.ok(performance.now() - started < 3000, JSON.stringify(timeouts))
      } finally {
        await locker.query('rollback')
        locker.release()
      }
    }
  })

  it('keeps whole every name made of a table at the bounds: 48 bytes, or 53 beside a migrationTable of 58', async () => {
    for (const [table, migrationTable] of [
      ['t'.repeat(48), undefined],
      ['é'.repeat(24), undefined],
      ['u'.repeat(53), `m${'u'.repeat(57)}`],
    ] as const) {
      const schema = freshSchema()
      const store = track(postgresStore({ connectionString }, { schema, table, migrationTable }))
      const pet = await store.create({ name: 'Rex', categoryId: 1 })
      // Another store on the same tables finds the migration recorded and the pet there.
      const again = track(postgresStore({ connectionString }, { schema, table, migrationTable }))
      assert.deepEqual(await again.get(pet.id), pet)
      const migrations = migrationTable ?? `${table}_migration`
      const { rows } = await admin.query(
        'select relname from pg_class join pg_namespace on pg_namespace.oid = relnamespace where nspname = $1',
        [schema],
      )
      const names = new Set(rows.map((row: { relname: string }) => row.relname))
      for (const name of [table, `${table}_status_id`, migrations, `${migrations}_lock`]) {
        assert.ok(names.has(name), `${name} in ${[...names].join(', ')}`)
      }
    }
  })

  it('the bound on names is the one PostgreSQL keeps: a byte more, and it would cut <table>_migration_lock', async () => {
    const lock = (table: string) => `${table}_migration_lock`
    const { rows } = await admin.query(
      'select $1::text::name::text as a, $2::text::name::text as b, $3::text::name::text as c, $4::text::name::text as d',
      [lock('t'.repeat(48)), lock('t'.repeat(49)), lock('é'.repeat(24)), lock('é'.repeat(25))],
    )
    assert.equal(rows[0].a, lock('t'.repeat(48)))
    assert.notEqual(rows[0].b, lock('t'.repeat(49)))
    assert.equal(rows[0].c, lock('é'.repeat(24)))
    assert.notEqual(rows[0].d, lock('é'.repeat(25)))
    assert.throws(() => postgresStore({ connectionString }, { table: 't'.repeat(49) }), TypeError)
    assert.throws(() => postgresStore({ connectionString }, { table: 'é'.repeat(25) }), TypeError)
  })

  it('serves with the largest timeouts taken, 2147483647 ms', async () => {
    const longest = 2_147_483_647
    const store = track(
      postgresStore(
        { connectionString, connectionTimeoutMillis: longest, statement_timeout: longest, query_timeout: longest },
        { schema: freshSchema() },
      ),
    )
    const pet = await store.create({ name: 'Rex', categoryId: 1 })
    assert.deepEqual(await store.get(pet.id), pet)
  })

  it("without a schema, uses the connection's current schema even when another schema holds tables of that name", async () => {
    const decoy = freshSchema()
    await track(postgresStore({ connectionString }, { schema: decoy })).create({ name: 'Decoy', categoryId: 1 })
    const mine = freshSchema()
    await admin.query(`create schema ${mine}`)
    const store = track(postgresStore({ connectionString, options: `-c search_path=${mine}` }))
    const pet = await store.create({ name: 'Mine', categoryId: 2 })
    assert.deepEqual(await store.get(pet.id), pet)
    assert.equal((await admin.query(`select count(*)::int as n from ${mine}.petstore_pets`)).rows[0].n, 1)
  })
})

describe('mysqlStore on a MySQL or MariaDB server', { skip: !MYSQL_URL && 'PETSTORE_TEST_MYSQL_URL not set' }, () => {
  const uri = MYSQL_URL ?? ''
  const admin = mysql.createPool({ uri, connectionLimit: 2, supportBigNumbers: true }).promise()
  /** The application's own kysely instance, for kyselyStore. */
  const db = new Kysely<any>({
    dialect: new MysqlDialect({
      pool: mysql.createPool({ uri, connectionLimit: 10, charset: 'utf8mb4', supportBigNumbers: true }),
    }),
  })
  const tables: string[] = []
  /** A table name whose table (and migration tables) are dropped at the end. */
  function freshTable(): string {
    const table = freshName()
    tables.push(...createdTables(table, `${table}_migration`))
    return table
  }
  after(async () => {
    await db.destroy()
    if (tables.length > 0) await admin.query(`drop table if exists ${tables.join(', ')}`)
    await admin.end()
  })

  serverStoreTests({
    store: 'mysqlStore',
    server: 'MySQL server',
    place: 'table',
    freshPlace: freshTable,
    open: (table, connectionLimit) => mysqlStore({ uri, connectionLimit }, { table }),
    openKysely: (table) => kyselyStore(db, { table }),
    async pauseInserts(table) {
      // After the id is drawn and before the commit, a random pause lets concurrent inserts commit out of order.
      await admin.query(`create trigger ${table}_pause after insert on ${table} for each row do sleep(rand() * 0.02)`)
    },
    async refuse(table) {
      await admin.query(`create trigger ${table}_refuse before insert on ${table} for each row
        if new.name = '${REJECTED_NAME}' then signal sqlstate '45000' set message_text = 'refused'; end if`)
    },
  })

  it('leaves a pool it was given open after close()', async () => {
    const pool = mysql.createPool({ uri, connectionLimit: 2, charset: 'utf8mb4', supportBigNumbers: true })
    try {
      const store = mysqlStore({ pool }, { table: freshTable() })
      await store.create({ name: 'Rex', categoryId: 1 })
      await store.close?.()
      const [rows] = await pool.promise().query('select 1 as one')
      assert.deepEqual(rows, [{ one: 1 }])
    } finally {
      await pool.promise().end()
    }
  })

  it('serves on the callback pool of a mysql2/promise pool, as the refusal of the promise pool tells, with queryTimeoutMillis 0', async () => {
    const promisePool = mysqlPromise.createPool({
      uri,
      connectionLimit: 2,
      charset: 'utf8mb4',
      supportBigNumbers: true,
    })
    try {
      assert.throws(() => mysqlStore({ pool: promisePool as never }), /pool is a mysql2\/promise pool/)
      const store = mysqlStore({ pool: promisePool.pool }, { table: freshTable(), queryTimeoutMillis: 0 })
      const pet = await store.create({ name: 'Rex', categoryId: 1 })
      assert.deepEqual(await store.get(pet.id), pet)
      await store.close?.()
    } finally {
      await promisePool.end()
    }
  })

  it('keeps whole every name made of a table at the bounds: 48 bytes, or 53 beside a migrationTable of 58', async () => {
    const unique = (length: number) => freshName().padEnd(length, 'x')
    for (const [table, migrationTable] of [
      [unique(48), undefined],
      [unique(53), unique(58)],
    ] as const) {
      const migrations = migrationTable ?? `${table}_migration`
      tables.push(table, migrations, `${migrations}_lock`)
      const store = track(mysqlStore({ uri, connectTimeout: 2_147_483_647 }, { table, migrationTable }))
      const pet = await store.create({ name: 'Rex', categoryId: 1 })
      const again = track(mysqlStore({ uri }, { table, migrationTable }))
      assert.deepEqual(await again.get(pet.id), pet)
      const [rows] = await admin.query(
        'select table_name as name from information_schema.tables where table_schema = database() and table_name in (?, ?, ?)',
        [table, migrations, `${migrations}_lock`],
      )
      assert.equal((rows as unknown[]).length, 3)
    }
  })

  it('keeps its tables in the database `schema` names, created if missing, every path there (the batched creates too)', async () => {
    const schema = `${freshName()}_db`
    try {
      const store = track(mysqlStore({ uri }, { schema, table: 'pets' }))
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.create({ name: `p${i}`, categoryId: i })),
      )
      const ids = created.map((pet) => pet.id)
      assert.deepEqual((await store.get(ids[3] as number))?.name, 'p3')
      assert.deepEqual(
        (await store.list({ limit: 100 })).map((pet) => pet.id),
        [...ids].sort((a, b) => a - b),
      )
      const [rows] = await admin.query('select count(*) as n from ??.??', [schema, 'pets'])
      assert.equal(Number((rows as Array<{ n: number }>)[0]?.n), 20)
    } finally {
      await admin.query('drop database if exists ??', [schema])
    }
  })

  it('stores names of 255 code points, emoji and all, in a utf8mb4 table', async () => {
    const table = freshTable()
    const store = track(mysqlStore({ uri }, { table }))
    for (const name of ['🐈'.repeat(255), 'x'.repeat(255), 'Ñandú 𝄞 中文 🐕‍🦺', `${'é'.repeat(254)}🐈`]) {
      const pet = await store.create({ name, categoryId: 1 })
      assert.equal((await store.get(pet.id))?.name, name)
    }
    const [rows] = await admin.query(
      'select table_collation as collation from information_schema.tables where table_schema = database() and table_name = ?',
      [table],
    )
    assert.match((rows as Array<{ collation: string }>)[0]?.collation ?? '', /^utf8mb4/)
  })

  it('round-trips ids and categoryIds beyond 2^32 exactly, the new id taken from insertId', async () => {
    const table = freshTable()
    const store = track(mysqlStore({ uri }, { table }))
    await store.ping?.()
    await admin.query(`insert into ${table} (id, name, category_id) values (?, 'Seed', 0)`, [2 ** 32 + 7])
    const created = await store.create({ name: 'Next', categoryId: -MAX })
    assert.deepEqual(created, { id: 2 ** 32 + 8, name: 'Next', categoryId: -MAX })
    await admin.query(`insert into ${table} (id, name, category_id, status) values (?, 'Big', ?, 'pending')`, [
      MAX,
      MAX,
    ])
    assert.deepEqual(await store.get(MAX), { id: MAX, name: 'Big', categoryId: MAX, status: 'pending' })
    assert.deepEqual(
      (await store.list({ limit: 5, after: 2 ** 32 + 7 })).map((pet) => pet.id),
      [2 ** 32 + 8, MAX],
    )
  })

  it('answers 503 when a statement outlives queryTimeoutMillis, and serves again after', async () => {
    const table = freshTable()
    // Migrated first with the default timeout: the first migration reads the server's catalog, which is
    // slow while other tests make tables. The store under test finds the schema current in one read.
    const migrating = mysqlStore({ uri, connectionLimit: 1 }, { table })
    await migrating.create({ name: 'Rex', categoryId: 1 })
    await migrating.close?.()
    const store = track(mysqlStore({ uri, connectionLimit: 1 }, { table, queryTimeoutMillis: 300 }))
    assert.equal((await store.list({ limit: 5 })).length, 1)
    const locker = await admin.getConnection()
    try {
      await locker.query(`lock tables ${table} write`)
      const started = performance.now()
      await assert.rejects(store.list({ limit: 1 }), (error) => error instanceof PetstoreError && error.status === 503)
      assert.ok(performance.now() - started < 3000)
    } finally {
      await locker.query('unlock tables')
      locker.release()
    }
    // The timed-out connection was dropped (its state is unknown); the pool of one opens another.
    assert.equal((await store.list({ limit: 5 })).length, 1)
  })
})
