/**
 * `kyselyStore`: pets in any SQL database kysely speaks to. The SQLite,
 * PostgreSQL and MySQL stores are this store over their dialects.
 *
 * @module
 */
import { type Kysely, Migrator, sql } from 'kysely'
import { PetstoreError } from '../../api/errors.js'
import type { Pet } from '../../api/schemas.js'
import { kindOf, optionsObject } from '../../util/option-checks.js'
import {
  type BuiltInStore,
  builtIn,
  type JsonPage,
  LIST_JSON,
  type ListQuery,
  NOW,
  type PetStore,
  type StoreNow,
} from '../store.js'
import { groupCommit } from './group-commit.js'
import { categoryIdText, HOT_PATH, type HotPath, type OpenHotPath, type PetRow, storedPet, toPet } from './hot-path.js'
import { querySpanPlugin } from './kysely-spans.js'
import { migrations, sqlFamily } from './migrations.js'
import type { DbSystem } from './query-spans.js'
import { KYSELY_STORE_OPTIONS, sqlStoreOptions } from './store-options.js'

/** Options of {@link kyselyStore}. */
export interface KyselyStoreOptions {
  /**
   * Table of pets: a name without `.`, of at most 53 bytes of UTF-8 (48 when `migrationTable` is
   * left to its default), so that every name the store makes of it (`<table>_status_id`,
   * `<table>_migration_lock`) fits in the 63 bytes PostgreSQL keeps of a name. Checked on every
   * database alike. @default 'petstore_pets'
   */
  table?: string | undefined
  /**
   * Table where applied migrations are recorded (and `<name>_lock`); one per pets table, never
   * `table` itself. A name without `.`, of at most 58 bytes of UTF-8 (`<name>_lock` fits in 63).
   * @default 'petstore_migration', or `<table>_migration` for a table of another name
   */
  migrationTable?: string | undefined
  /**
   * Schema of both tables (a PostgreSQL schema, a MySQL database), created on first use if
   * missing: a non-empty name of at most 63 bytes of UTF-8. @default the connection's current schema
   */
  schema?: string | undefined
  /** Destroy the kysely instance on `close()`. Leave it off for a database your application owns. @default false */
  destroyOnClose?: boolean | undefined
  /**
   * Group commit: creates that arrive while another is being written go
   * together in the next write, one transaction and one commit (`sqliteStore`,
   * `postgresStore`, `mysqlStore`; a `kyselyStore` over your own instance has
   * no statements of its own to batch). Off, each create commits on its own.
   * @default true
   */
  batchCreates?: boolean | undefined
}

// Errors that mean "the database is not there right now", not "this request is wrong".
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  '57P01', // postgres: admin shutdown
  '57P02', // postgres: crash shutdown
  '57P03', // postgres: cannot connect now
  '57014', // postgres: statement timeout (or canceled)
  '53300', // postgres: too many connections
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_STATEMENT_TIMEOUT',
  'ER_QUERY_TIMEOUT',
])

// pg reports a lost or timed-out connection with a bare Error, no code: only its message tells.
const PG_CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/

/** Whether `error` says the database cannot be reached (→ 503), judged by its code (or pg's message). */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false
  const code = errorCode(error)
  const { message, fatal, errors, cause } = error as {
    message?: unknown
    fatal?: unknown
    errors?: unknown
    cause?: unknown
  }
  if (code !== undefined) {
    if (UNAVAILABLE.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY')) return true
    if (/^08[0-9A-Z]{3}$/.test(code)) return true // postgres: class 08, connection exception
  }
  if (typeof message === 'string' && PG_CONNECTION_LOST.test(message)) return true
  // mysql2 marks errors that broke the connection as fatal ("Can't add new command when connection is in closed state").
  if (fatal === true && !code?.startsWith('ER_')) return true
  // A host name with several addresses fails with an AggregateError of one error per address.
  if (Array.isArray(errors) && errors.some((each) => isUnavailable(each, depth + 1))) return true
  return isUnavailable(cause, depth + 1)
}

// Processes migrating one database at the same moment collide on these; the loser tries again.
const RACE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  '23505', // postgres: unique violation (a concurrent `create … if not exists` on the catalog)
  '42P06', // postgres: duplicate schema
  '42P07', // postgres: duplicate table
  '40P01', // postgres: deadlock
  'ER_DUP_ENTRY',
  'ER_TABLE_EXISTS_ERROR',
  'ER_LOCK_DEADLOCK',
])

function isMigrationRace(error: unknown): boolean {
  const code = errorCode(error)
  // SQLite has no migration lock: two processes may both record migration 0001 (it is idempotent).
  return (
    code !== undefined && (RACE.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_CONSTRAINT'))
  )
}

// node:sqlite reports every failure as ERR_SQLITE_ERROR with SQLite's numeric (extended) result code.
const SQLITE_EXTENDED: Record<number, string> = {
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}
const SQLITE_PRIMARY: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
}

/** The error's code as a string, with node:sqlite's numeric codes named as the other drivers name them. */
function errorCode(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown }
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    return SQLITE_EXTENDED[errcode] ?? SQLITE_PRIMARY[errcode & 0xff] ?? code
  }
  return typeof code === 'string' ? code : undefined
}

/** The options the package's own SQL stores pass: a hot path beside the public ones. */
interface InternalKyselyStoreOptions extends KyselyStoreOptions {
  [HOT_PATH]?: OpenHotPath
}

/** `error`, as a 503 when it says the database cannot be reached. */
const mapped = (error: unknown): unknown => (isUnavailable(error) ? PetstoreError.unavailable(error) : error)

/** Rejects with `error`, as a 503 when it says the database cannot be reached. */
function unavailable(error: unknown): Promise<never> {
  return Promise.reject(mapped(error))
}

/** `read`, its failures mapped as the asynchronous calls map them (see `unavailable`). */
const mappingErrors =
  <A, R>(read: (argument: A) => unknown) =>
  (argument: A): R => {
    try {
      return read(argument) as R
    } catch (error) {
      throw mapped(error)
    }
  }

/** The reads of a synchronous hot path (SQLite), offered to the handler as they are (see `NOW`). */
function readsNow(statements: HotPath): StoreNow {
  return {
    get: mappingErrors<number, Pet | undefined>((id) => statements.get(id)),
    list: mappingErrors<ListQuery, Pet[]>((query) => statements.list(query)),
    listJson: mappingErrors<ListQuery, JsonPage>((query) => statements.listJson(query)),
  }
}

/**
 * A store over a kysely instance. The schema is created by kysely's
 * `Migrator` on first use; the tables carry the library's name, so the store
 * can share an application's database.
 *
 * @example
 * ```ts
 * import { Kysely, PostgresDialect } from 'kysely'
 * import { kyselyStore } from 'petstore-server/kysely'
 *
 * const store = kyselyStore(new Kysely({ dialect: new PostgresDialect({ pool }) }))
 * ```
 */
export function kyselyStore(given: Kysely<any>, options: KyselyStoreOptions = {}): PetStore {
  if (typeof given?.getExecutor !== 'function' || typeof given.withPlugin !== 'function') {
    throw new TypeError(`kyselyStore: pass a Kysely instance (new Kysely({ dialect })), got ${kindOf(given)}`)
  }
  optionsObject('kyselyStore', 'options', options, "{ table: 'pets' }")
  // The SQL stores over this one have checked their options in their own name: these pass.
  const { table, migrationTable, schema: givenSchema } = sqlStoreOptions('kyselyStore', options, KYSELY_STORE_OPTIONS)
  const openHotPath = (options as InternalKyselyStoreOptions)[HOT_PATH]
  const family = sqlFamily(given)
  /** `db.system` of the query spans; a MySQL-family server says at migration whether it is MariaDB. */
  let system: DbSystem = family === 'postgres' ? 'postgresql' : family
  // Query spans for what goes through kysely (see kysely-spans.ts): the same executor, one plugin more.
  const db = given.withPlugin(querySpanPlugin(() => system))
  let schemaName = givenSchema
  let scoped = schemaName ? db.withSchema(schemaName) : db
  let ready: Promise<void> | undefined
  let closing: Promise<void> | undefined
  /**
   * The statements of the hot path, once the schema exists: the SQLite and PostgreSQL stores
   * serve get, list and create on statements they prepared once (see there why), and kysely
   * keeps the schema, the migrations, ping, and every other dialect.
   */
  let hot: HotPath | undefined
  /** Its reads answered synchronously, where it has them (SQLite): see `NOW`. */
  let now: StoreNow | undefined

  async function migrate(): Promise<void> {
    let schema = givenSchema
    if (schema === undefined && family === 'postgres') {
      // The Migrator looks for its tables in every schema unless told one: name the one tables go to.
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
      schema = rows[0]?.schema ?? undefined
      if (schema !== undefined) scoped = db.withSchema(schema)
      schemaName = schema
    }
    if (family === 'mysql') {
      const { rows } = await sql<{ version: string }>`select version() as version`.execute(db)
      if (/mariadb/i.test(String(rows[0]?.version))) system = 'mariadb'
    }
    const set = migrations(table, family, schema)
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => set },
      migrationTableName: migrationTable,
      migrationLockTableName: `${migrationTable}_lock`,
      migrationTableSchema: schema,
    })
    // Processes starting together on one database can collide (see RACE); the loser retries.
    for (let attempt = 1; ; attempt++) {
      const { error } = await migrator.migrateToLatest()
      if (!error) break
      if (attempt >= 8 || !isMigrationRace(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 20))
    }
    // Prepared only now: the statements name a table that exists from here on.
    const opened = await openHotPath?.({ table, schema, system })
    if (closing === undefined) {
      hot = opened && options.batchCreates !== false ? batched(opened) : opened
      now = opened?.synchronous ? readsNow(opened) : undefined
    }
  }

  /** `statements` with creates through group commit, when they can insert many rows at once. */
  function batched(statements: HotPath): HotPath {
    const { insertMany } = statements
    if (insertMany === undefined) return statements
    const insert = groupCommit(insertMany, {
      // Names are at most 255 code points: a batch of 256 stays well under the 1 MiB default.
      sizeOf: (pet) => 64 + pet.name.length * 3,
      take: statements.batchOf,
      // A constraint or bad data rolled the batch back: its halves are tried again. A lost
      // connection may have committed it: every caller in it gets the 503, as each would alone.
      canSplit: (error) => !isUnavailable(error),
    })
    return { ...statements, create: async (pet) => storedPet(await insert(pet), pet) }
  }

  /** Runs `work` once the schema exists, mapping an unreachable database to 503. */
  async function run<T>(work: () => Promise<T>): Promise<T> {
    try {
      // A failed migration is forgotten, so the next request tries again (the database may be back).
      ready ??= migrate().catch((error) => {
        ready = undefined
        throw error
      })
      await ready
      return await work()
    } catch (error) {
      throw isUnavailable(error) ? PetstoreError.unavailable(error) : error
    }
  }

  /**
   * Runs `work` on the hot path when the store has one: at once when the schema is known to
   * exist (no await in between, SQLite answers synchronously), else after the migration.
   */
  function fast<T>(work: (hot: HotPath) => T | Promise<T>, slow: () => Promise<T>): Promise<T> {
    const statements = hot
    if (statements === undefined) return run(() => (hot ? Promise.resolve(work(hot)) : slow()))
    try {
      const result = work(statements)
      return result instanceof Promise ? result.catch(unavailable) : Promise.resolve(result)
    } catch (error) {
      return unavailable(error)
    }
  }

  const columns = ['id', 'name', 'category_id', 'status'] as const
  /** What rows are read as: category_id as decimal text, which every driver reads exactly (see `petColumns`). */
  const selection = ['id', 'name', sql.raw<string>(categoryIdText(family)).as('category_id'), 'status'] as const

  /**
   * Inserts a pet so that pets become visible in the order of their ids.
   * PostgreSQL and MySQL hand out ids before commit, so concurrent writers can
   * commit id 34 before 33; a client paging by id could pass 33 before it
   * exists and never see it. A lock held from the id's allocation to the
   * commit keeps commit order equal to id order, across processes too. (SQLite
   * writes one transaction at a time already.) It costs one round trip or two
   * per create, and serializes creates on one table.
   */
  async function insertInIdOrder(values: Omit<PetRow, 'id'>): Promise<PetRow> {
    const lockName = `petstore:${schemaName ?? ''}.${table}`
    if (family === 'postgres') {
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${lockName}))`.execute(trx)
        const target = schemaName ? trx.withSchema(schemaName) : trx
        return (await target.insertInto(table).values(values).returning(columns).executeTakeFirstOrThrow()) as PetRow
      })
    }
    if (family === 'mysql') {
      // A named lock on one connection: the autocommitted insert is durable before the lock is let go.
      return db.connection().execute(async (connection) => {
        const { rows } = await sql<{ got: number | null }>`select get_lock(sha1(${lockName}), 10) as got`.execute(
          connection,
        )
        if (Number(rows[0]?.got) !== 1)
          throw PetstoreError.unavailable(new Error('timed out waiting for the insert lock'))
        try {
          const target = schemaName ? connection.withSchema(schemaName) : connection
          const { insertId } = await target.insertInto(table).values(values).executeTakeFirstOrThrow()
          return { ...values, id: insertId as bigint }
        } finally {
          await sql`select release_lock(sha1(${lockName}))`.execute(connection)
        }
      })
    }
    return (await scoped.insertInto(table).values(values).returning(columns).executeTakeFirstOrThrow()) as PetRow
  }

  const store: BuiltInStore = {
    [NOW]: () => now,
    create: (pet) =>
      fast(
        (statements) => statements.create(pet),
        async () => {
          const values: Omit<PetRow, 'id'> = { name: pet.name, category_id: pet.categoryId, status: pet.status ?? null }
          // The pet as given, not as the row returns it: a driver may read category_id back rounded.
          return storedPet(Number((await insertInIdOrder(values)).id), pet)
        },
      ),
    get: (id) =>
      fast(
        (statements) => statements.get(id),
        async () => {
          const row = await scoped.selectFrom(table).select(selection).where('id', '=', id).executeTakeFirst()
          return row && toPet(row as PetRow)
        },
      ),
    list: (query: ListQuery) =>
      fast(
        (statements) => statements.list(query),
        async () => {
          const { status, limit, after } = query
          let select = scoped.selectFrom(table).select(selection)
          if (status !== undefined) select = select.where('status', '=', status)
          if (after !== undefined) select = select.where('id', '>', after)
          const rows = await select.orderBy('id').limit(limit).execute()
          return (rows as PetRow[]).map(toPet)
        },
      ),
    ping: () =>
      run(async () => {
        await scoped.selectFrom(table).select('id').limit(1).execute()
      }),
    close() {
      // Later calls go to kysely, which refuses them once destroyed, as before there was a hot path.
      hot = undefined
      now = undefined
      closing ??= options.destroyOnClose ? db.destroy() : Promise.resolve()
      return closing
    },
  }
  if (openHotPath) {
    // Only stores with a hot path write pages as JSON; `fast` never takes `slow` for them once migrated.
    store[LIST_JSON] = (query: ListQuery): Promise<JsonPage> =>
      fast(
        (statements) => statements.listJson(query),
        () => Promise.reject(new Error('kyselyStore: the hot path is closed')),
      )
  }
  return builtIn(store)
}
