/**
 * `sqliteStore`: pets in one SQLite file, through better-sqlite3.
 *
 * @module
 */
import { Kysely, SqliteDialect } from 'kysely'
import { PetstoreError } from '../errors.js'
import type { PetStore } from '../store.js'
import { type KyselyStoreOptions, kyselyStore } from './kysely.js'

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose'> {
  /** The database file (created if missing), or `':memory:'`. */
  path: string
  /** How long a write waits for another process's lock before failing. @default 5000 */
  busyTimeoutMs?: number
}

/**
 * A store in a SQLite file. The driver is loaded on first use, so importing
 * this module costs nothing until then. The file runs in WAL mode with
 * `synchronous = NORMAL`: an acknowledged write survives a crash of the
 * process (not necessarily a power cut), and readers never block the writer.
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'petstore-server/sqlite'
 *
 * const store = sqliteStore({ path: './petstore.db' })
 * ```
 */
export function sqliteStore(options: SqliteStoreOptions): PetStore {
  const { path, busyTimeoutMs = 5000, ...rest } = options
  const dialect = new SqliteDialect({
    async database() {
      let Database: typeof import('better-sqlite3')
      try {
        Database = (await import('better-sqlite3')).default
      } catch (cause) {
        throw new PetstoreError(500, 'internal_error', 'sqliteStore needs better-sqlite3: npm install better-sqlite3', {
          cause,
        })
      }
      const database = new Database(path)
      // Pragmas outside any transaction: journal_mode cannot change inside one.
      database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`)
      database.pragma('journal_mode = WAL')
      database.pragma('synchronous = NORMAL')
      return database
    },
  })
  return kyselyStore(new Kysely({ dialect }), { ...rest, destroyOnClose: true })
}
