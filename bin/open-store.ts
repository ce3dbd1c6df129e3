/**
 * Turns the binary's `--db` value into a store.
 *
 * @module
 */
import { memoryStore, type PetStore } from '../src/index.js'
import { UsageError } from './options.js'

/**
 * `memory`, `sqlite:PATH` (`sqlite::memory:` for an in-memory SQLite),
 * `postgres://…` / `postgresql://…` (`?schema=NAME` puts the tables in that schema)
 * or `mysql://…`.
 */
export async function openStore(db: string): Promise<PetStore> {
  if (db === 'memory') return memoryStore()
  // Group commit is on unless PETSTORE_BATCH_CREATES=0: the bench (bench/create-scale.ts) compares both.
  const batchCreates = process.env.PETSTORE_BATCH_CREATES !== '0'
  if (db.startsWith('sqlite:')) {
    const path = db.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') throw new UsageError('--db sqlite: needs a file path, e.g. sqlite:./petstore.db')
    // Loaded only when asked for: kysely and a driver are most of the binary's start-up time.
    const { sqliteStore } = await import('../src/stores/sqlite.js')
    return sqliteStore({ path, batchCreates })
  }
  if (/^postgres(ql)?:\/\//.test(db)) {
    const { postgresStore } = await import('../src/stores/postgres.js')
    // `schema` is ours, not a connection parameter: take it out before pg sees the URL.
    const url = new URL(db)
    const schema = url.searchParams.get('schema')
    if (schema === null) return postgresStore({ connectionString: db }, { batchCreates })
    url.searchParams.delete('schema')
    return postgresStore({ connectionString: url.href }, { schema: schema || undefined, batchCreates })
  }
  if (db.startsWith('mysql://')) {
    const { mysqlStore } = await import('../src/stores/mysql.js')
    return mysqlStore({ uri: db }, { batchCreates })
  }
  // Never echo credentials of a mistyped URL.
  throw new UsageError(
    `--db must be memory, sqlite:PATH, postgres://… or mysql://…, got "${db.replace(/\/\/[^@/]*@/, '//***@')}"`,
  )
}
