/**
 * `kyselyStore`: pets in a SQLite, PostgreSQL or MySQL database kysely speaks
 * to. It runs the statements of the database's dialect through kysely; the
 * SQLite, PostgreSQL and MySQL stores run the same ones on their own driver.
 *
 * @module
 */
import type { Kysely } from 'kysely'
import { kindOf, optionsObject } from '../../util/option-checks.js'
import type { ResettablePetStore } from '../store.js'
import { sqlStore } from './sql-store.js'
import type { KyselyStoreOptions } from './store-options.js'

export { isUnavailable } from './database-errors.js'
export type { KyselyStoreOptions } from './store-options.js'

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
export function kyselyStore(given: Kysely<any>, options: KyselyStoreOptions = {}): ResettablePetStore {
  if (typeof given?.getExecutor !== 'function' || typeof given.withPlugin !== 'function') {
    throw new TypeError(`kyselyStore: pass a Kysely instance (new Kysely({ dialect })), got ${kindOf(given)}`)
  }
  optionsObject('kyselyStore', 'options', options, "{ table: 'pets' }")
  return sqlStore(given, options)
}
