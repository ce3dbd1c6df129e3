/**
 * `sqliteStore`: pets in one SQLite file, through the SQLite driver of the
 * runtime (bun:sqlite, node:sqlite or better-sqlite3).
 *
 * @module
 */
import { Kysely, type SqliteDatabase, SqliteDialect } from 'kysely'
import type { PetStore } from '../store.js'
import { type KyselyStoreOptions, kyselyStore } from './kysely.js'
import { AUTO_ORDER, assertSqliteDriver, loadSqliteDriver, type SqliteDriver } from './sqlite-drivers.js'

export type { SqliteDriver } from './sqlite-drivers.js'

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose' | 'schema'> {
  /** The database file (created if missing), or `':memory:'`. */
  path: string
  /** How long a write waits for another process's lock before failing. @default 5000 */
  busyTimeoutMs?: number
  /**
   * The driver to use instead of the automatic choice: `'bun:sqlite'` under
   * Bun, else `'node:sqlite'` where the runtime has it (Node ≥ 22.13, Deno),
   * else `'better-sqlite3'`. @default automatic
   */
  driver?: SqliteDriver
}

/** The pragmas every driver gets, run before any transaction (journal_mode cannot change inside one). */
function configure(database: SqliteDatabase, busyTimeoutMs: number): void {
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
export function sqliteStore(options: SqliteStoreOptions): PetStore {
  const { path, busyTimeoutMs = 5000, driver, ...rest } = options
  // A misspelt driver is a programming error: say so now, not at the first request.
  if (driver !== undefined) assertSqliteDriver(driver)
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
      return database
    },
  })
  return kyselyStore(new Kysely({ dialect }), { ...rest, destroyOnClose: true })
}
