/**
 * `sqliteStore`: pets in one SQLite file, through the SQLite driver of the
 * runtime (bun:sqlite, node:sqlite or better-sqlite3).
 *
 * @module
 */
import { Kysely, SqliteDialect } from 'kysely'
import { tracing } from '../../shared/tracing.js'
import { misnamedOptions, optionsObject, shown } from '../../util/option-checks.js'
import type { ResettablePetStore } from '../store.js'
import { type SqliteCommand, type SqliteConnection, type SqliteQuery, sqliteHotPath } from './dialects/sqlite.js'
import type { HotPathTarget } from './hot-path.js'
import { describeQuery, inQuerySpan, type QueryDescription } from './query-spans.js'
import { sqlStore } from './sql-store.js'
import {
  AUTO_ORDER,
  assertSqliteDriver,
  type DriverDatabase,
  type DriverStatement,
  loadSqliteDriver,
  type SqliteDriver,
  type ValuesStatement,
} from './sqlite-drivers.js'
import type { KyselyStoreOptions } from './store-options.js'
import { sqlStoreOptions, timeoutMs } from './store-options.js'

export type { SqliteDriver } from './sqlite-drivers.js'

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose' | 'schema'> {
  /**
   * The database file (created if missing, in a directory that exists), or `':memory:'`.
   * Required: a missing or empty `path` throws, where it once opened a database that vanished
   * when the program ended.
   */
  path: string
  /**
   * How long a write waits for another process's lock before failing, in ms: a whole number
   * from 0 (fail at once) to 2147483647. @default 5000
   */
  busyTimeoutMs?: number | undefined
  /**
   * The driver to use instead of the automatic choice: `'bun:sqlite'` under
   * Bun, else `'node:sqlite'` where the runtime has it (Node ≥ 22.13, Deno),
   * else `'better-sqlite3'`. @default automatic
   */
  driver?: SqliteDriver | undefined
}

/** The pragmas every driver gets, run before any transaction (journal_mode cannot change inside one). */
function configure(database: DriverDatabase, busyTimeoutMs: number): void {
  // The busy timeout comes first so that switching to WAL waits for another process's lock.
  for (const pragma of [
    `busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`,
    'journal_mode = WAL',
    'synchronous = NORMAL',
  ]) {
    const statement = database.prepare(`pragma ${pragma}`)
    // better-sqlite3 refuses run() on a statement that returns a row (busy_timeout and journal_mode do).
    if (statement.reader) statement.all([])
    else statement.run([])
  }
}

/**
 * A prepared query, its rows read as arrays of values (see `ValuesStatement`), whose runs are query
 * spans when tracing is on (see query-spans.ts); else one check.
 */
class Query implements SqliteQuery {
  constructor(
    private readonly statement: ValuesStatement,
    private readonly query: QueryDescription,
  ) {}

  /** The first row's values, or `undefined`. */
  get(parameters: readonly unknown[]): unknown[] | undefined {
    return tracing() ? inQuerySpan(this.query, () => this.statement.get(parameters)) : this.statement.get(parameters)
  }

  all(parameters: readonly unknown[]): unknown[][] {
    return tracing() ? inQuerySpan(this.query, () => this.statement.all(parameters)) : this.statement.all(parameters)
  }
}

/** A prepared statement run for its effect, traced as {@link Query}: the last insert rowid. */
class Command implements SqliteCommand {
  constructor(
    private readonly statement: DriverStatement,
    private readonly query: QueryDescription,
  ) {}

  run(parameters: readonly unknown[]): number {
    const { lastInsertRowid } = tracing()
      ? inQuerySpan(this.query, () => this.statement.run(parameters))
      : this.statement.run(parameters)
    return Number(lastInsertRowid)
  }
}

/**
 * The driver's database as `sqliteStore` runs the SQLite dialect on it: statements prepared
 * once, run synchronously. Through kysely, each request built a query, compiled it and had
 * SQLite prepare it again, most of the time of a `get`. kysely keeps the migrations, which run
 * before these statements are prepared;
 * nothing uses kysely's connection afterwards, so the two never interleave inside a transaction.
 * Traced, each statement of a batch is a span of its own, under the request that started the batch.
 */
function ownConnection(database: DriverDatabase, target: HotPathTarget): SqliteConnection {
  const described = (text: string) => describeQuery('sqlite', text, target.table)
  return {
    synchronous: true,
    query: (text) => new Query(database.prepareValues(text), described(text)),
    command: (text) => new Command(database.prepare(text), described(text)),
  }
}

/** The options {@link sqliteStore} takes. */
const OPTIONS = ['path', 'busyTimeoutMs', 'driver', 'table', 'migrationTable', 'batchCreates'] as const

/**
 * Throws unless `options` are options of {@link sqliteStore}, with a `path`: without one, every
 * driver opened a temporary database, and nothing stored outlived the program.
 */
function checkOptions(options: SqliteStoreOptions): void {
  if (typeof options === 'string') {
    throw new TypeError(`sqliteStore: pass { path: ${shown(options)} }, not the path alone`)
  }
  optionsObject('sqliteStore', 'options', options, "{ path: './pets.db' }")
  misnamedOptions('sqliteStore', options, { filename: 'path', file: 'path', database: 'path' })
  if ('schema' in options) {
    throw new TypeError('sqliteStore: unknown option "schema": a SQLite file has no schemas, its path is the place')
  }
  sqlStoreOptions('sqliteStore', options, OPTIONS)
  const { path } = options as { path: unknown }
  if (path === undefined || path === null || path === '') {
    throw new TypeError("sqliteStore: path is required: a file path, or ':memory:'")
  }
  if (typeof path !== 'string') {
    throw new TypeError(`sqliteStore: path must be a string (a file path, or ':memory:'), got ${shown(path)}`)
  }
}

/**
 * A store in a SQLite file. The driver is loaded on first use, so importing
 * this module costs nothing until then, and only the chosen driver is ever
 * loaded (all are optional). The file runs in WAL mode with
 * `synchronous = NORMAL`: an acknowledged write survives a crash of the
 * process (not necessarily a power cut), and readers never block the writer.
 *
 * Drivers: `bun:sqlite` under Bun; `node:sqlite` where the runtime has it
 * (Node ≥ 22.13 without flags; Node 22 prints its ExperimentalWarning once);
 * otherwise better-sqlite3 (`npm install better-sqlite3`). `driver` forces one.
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'petstore-server/sqlite'
 *
 * const store = sqliteStore({ path: './petstore.db' })
 * const pinned = sqliteStore({ path: './petstore.db', driver: 'better-sqlite3' })
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): ResettablePetStore {
  checkOptions(options)
  const { path, busyTimeoutMs = 5000, driver, ...rest } = options
  timeoutMs('sqliteStore', 'busyTimeoutMs', busyTimeoutMs)
  // A misspelt driver is a programming error: say so now, not at the first request.
  if (driver !== undefined) assertSqliteDriver(driver)
  /** The one connection, kysely's and the hot path's. */
  let opened: DriverDatabase | undefined
  const dialect = new SqliteDialect({
    async database() {
      const { open } = await loadSqliteDriver(driver ? [driver] : AUTO_ORDER)
      const database = open(path)
      try {
        configure(database, busyTimeoutMs)
      } catch (error) {
        database.close()
        throw error
      }
      opened = database
      return database
    },
  })
  return sqlStore(
    new Kysely({ dialect }),
    {
      ...rest,
      destroyOnClose: true,
    },
    (target: HotPathTarget) => {
      // The migrations have run through kysely, so its driver has opened the database.
      if (opened === undefined) throw new Error('sqliteStore: the database is not open')
      return sqliteHotPath(ownConnection(opened, target), target)
    },
  )
}
