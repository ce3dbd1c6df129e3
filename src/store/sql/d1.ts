/**
 * `d1Store`: pets in a Cloudflare D1 database (SQLite on Cloudflare), through
 * the Worker's D1 binding.
 *
 * @module
 */
import { PetstoreError } from '../../shared/petstore-error.js'
import { knownOptions, optionsObject } from '../../util/option-checks.js'
import { builtInStore, type PetStore, type Store, storeCalls } from '../store.js'
import { type SqliteConnection, sqliteHotPath } from './dialects/sqlite.js'
import { type HotPath, type HotPathTarget, quoteName } from './hot-path.js'
import { keyedCreates } from './keyed-sql.js'
import { sqliteMigrations } from './schema-history.js'
import { migrationTableOf, petsTable } from './store-options.js'

/**
 * The few members of a D1 prepared statement this store uses: declared here
 * so the package needs no `@cloudflare/workers-types` (a Worker's own
 * `D1Database` fits it).
 */
export interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement
  first<T = Record<string, unknown>>(): Promise<T | null>
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>
  run(): Promise<{ meta: { last_row_id?: number } }>
}

/** The members of a D1 binding (`env.DB`) this store uses. */
export interface D1Database {
  prepare(query: string): D1PreparedStatement
  batch(statements: D1PreparedStatement[]): Promise<unknown[]>
}

/** Options of {@link d1Store}. */
export interface D1StoreOptions {
  /**
   * Table of pets: a name as `sqliteStore` takes it, without `.` and of at most 53 bytes of
   * UTF-8 (`<table>_status_id`, its index, fits in 63). @default 'petstore_pets'
   */
  table?: string | undefined
}

/**
 * D1's messages for failures worth a retry (Cloudflare's D1 docs list them):
 * the database is restarting, moving or overloaded, not the request wrong.
 */
const RETRYABLE =
  /Network connection lost|storage caused object to be reset|reset because its code was updated|D1 DB is overloaded|transient issue|Cannot resolve D1 DB/

/** `error` as a 503 when D1 says it cannot serve right now; anything else stays what it is (a 500). */
function unavailable(error: unknown): never {
  const message =
    error instanceof Error ? `${error.message} ${String((error.cause as Error | undefined)?.message)}` : ''
  throw RETRYABLE.test(message) ? PetstoreError.unavailable(error) : error
}

/**
 * D1 binds numbers as doubles and takes no bigint: an int64 beyond 2^53 goes
 * as its decimal text, which the INTEGER column stores as the exact integer.
 */
const d1Value = (value: unknown) => (typeof value === 'bigint' ? value.toString() : value)

const valuesOf = (row: Record<string, unknown>) => Object.values(row)

/**
 * `db` as the SQLite dialect runs its statements: each prepared once and bound per request,
 * one D1 query committed on its own, rows read as their values in the order selected.
 *
 * Ids stay unique and in commit order without a transaction: the pets table
 * is AUTOINCREMENT, and a D1 database runs one statement at a time (it lives
 * in one Durable Object, single-threaded), so the insert that takes an id
 * commits before the next insert runs. A reader walking `next` links can
 * therefore never see id n+1 before id n; test/workerd.test.ts checks this
 * under concurrent creates on workerd.
 */
function d1Connection(db: D1Database): SqliteConnection {
  return {
    query(text) {
      const statement = db.prepare(text)
      return {
        async get(parameters) {
          const row = await statement.bind(...parameters).first()
          return row === null ? undefined : valuesOf(row)
        },
        all: async (parameters) => (await statement.bind(...parameters).all()).results.map(valuesOf),
      }
    },
    command(text) {
      const statement = db.prepare(text)
      return {
        async run(parameters) {
          const { meta } = await statement.bind(...parameters.map(d1Value)).run()
          return idOf(meta)
        },
      }
    },
    // A batch is one transaction in D1: a pet and its key are stored together or not at all.
    async transaction(steps) {
      const bound = steps.map(({ text, parameters }) => db.prepare(text).bind(...parameters.map(d1Value)))
      const results = (await db.batch(bound)) as Array<{ meta: { last_row_id?: number } }>
      return results.map(({ meta }) => idOf(meta))
    },
  }
}

function idOf(meta: { last_row_id?: number }): number {
  if (meta.last_row_id === undefined) throw new Error('d1Store: D1 reported no id for the new pet')
  return meta.last_row_id
}

/**
 * Runs the steps of `sqliteStore`'s migrations that `migrationTable` does not record, each with its
 * record, in one `batch` (one transaction in D1). The record is kysely's, as `sqliteStore` keeps it.
 * Isolates starting together may both run a step: the second batch then fails whole, and a second
 * look finds every step recorded.
 */
async function migrate(db: D1Database, target: HotPathTarget, migrationTable: string): Promise<void> {
  const records = quoteName(migrationTable)
  const pending = async () => {
    await db
      .prepare(
        `create table if not exists ${records} ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null)`,
      )
      .run()
    const { results } = await db.prepare(`select "name" from ${records}`).all<{ name: string }>()
    const done = new Set(results.map((row) => row.name))
    return Object.entries(sqliteMigrations(target)).filter(([name]) => !done.has(name))
  }
  const run = (steps: Array<[string, readonly string[]]>) => {
    const now = new Date().toISOString()
    return db.batch(
      steps.flatMap(([name, statements]) => [
        ...statements.map((statement) => db.prepare(statement)),
        db.prepare(`insert or ignore into ${records} ("name", "timestamp") values (?, ?)`).bind(name, now),
      ]),
    )
  }
  const steps = await pending()
  if (steps.length === 0) return
  try {
    await run(steps)
  } catch (error) {
    if ((await pending()).length > 0) throw error
  }
}

/**
 * A store in a Cloudflare D1 database: pass the Worker's binding. On first
 * use it creates the tables of `sqliteStore`, by the same migrations, each
 * step recorded as `sqliteStore` records it. No kysely: D1 has no
 * interactive transactions to run its Migrator in, and a Worker's bundle is a
 * quarter the size without it.
 *
 * @example
 * ```ts
 * import { createPetstore, type FetchHandler } from 'petstore-server'
 * import { type D1Database, d1Store } from 'petstore-server/d1'
 *
 * let petstore: FetchHandler | undefined
 * export default {
 *   fetch(request: Request, env: { DB: D1Database }) {
 *     petstore ??= createPetstore({ store: d1Store(env.DB), keys: ['secret'] })
 *     return petstore(request)
 *   },
 * }
 * ```
 */
export function d1Store(db: D1Database, options: D1StoreOptions = {}): PetStore {
  if (typeof db?.prepare !== 'function' || typeof db.batch !== 'function') {
    throw new TypeError('d1Store: pass a D1 binding (env.DB), which has prepare() and batch()')
  }
  optionsObject('d1Store', 'options', options, "{ table: 'pets' }")
  knownOptions('d1Store', options, ['table'])
  // A name as sqliteStore takes it: the two stores share their SQL. No lock table: D1 runs one batch at a time.
  const target: HotPathTarget = { table: petsTable('d1Store', options.table), schema: undefined }
  const migrationTable = migrationTableOf(target.table)
  let ready: Promise<HotPath> | undefined
  let closed = false

  /** The hot path once the schema exists; a failure is forgotten, so the next call tries again. */
  function open(): Promise<HotPath> {
    if (closed) return Promise.reject(new Error('d1Store: the store is closed'))
    ready ??= migrate(db, target, migrationTable).then(
      () => sqliteHotPath(d1Connection(db), target),
      (error) => {
        ready = undefined
        unavailable(error)
      },
    ) as Promise<HotPath>
    return ready
  }
  const keyed = keyedCreates()
  const run = <T>(work: (hot: HotPath) => T | Promise<T>): Promise<T> => open().then(work).catch(unavailable)

  const store: Store = {
    ...storeCalls(
      (name) => (arg) =>
        run((hot) => (hot[name as Exclude<typeof name, 'createKeyed'>] as (arg: unknown) => unknown)(arg)),
    ),
    createKeyed: (request) => run((hot) => keyed(hot.keys, (id) => hot.get(id), request)),
    ping: () => run((hot) => hot.ping()),
    close() {
      closed = true
    },
  }
  return builtInStore(store)
}
