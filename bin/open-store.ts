/**
 * Turns the binary's `--db` value into a store.
 *
 * @module
 */
import { memoryStore, type PetStore } from '../src/index.js'
import { sqliteStore } from '../src/stores/sqlite.js'
import { UsageError } from './options.js'

/** `memory` or `sqlite:PATH` (`sqlite::memory:` for an in-memory SQLite). */
export function openStore(db: string): PetStore {
  if (db === 'memory') return memoryStore()
  if (db.startsWith('sqlite:')) {
    const path = db.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') throw new UsageError('--db sqlite: needs a file path, e.g. sqlite:./petstore.db')
    return sqliteStore({ path })
  }
  if (/^(postgres|postgresql|mysql):\/\//.test(db)) {
    throw new UsageError(`--db ${db.split(':')[0]}:// is not supported by this version; use memory or sqlite:PATH`)
  }
  // Never echo credentials of a mistyped URL.
  throw new UsageError(`--db must be memory or sqlite:PATH, got "${db.replace(/\/\/[^@/]*@/, '//***@')}"`)
}
