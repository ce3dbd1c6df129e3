/**
 * Turns the binary's `--db` value into a store.
 *
 * @module
 */
import { closeSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { redactedUrl } from '../src/for-binary.js'
import { memoryStore, type ResettablePetStore } from '../src/index.js'
import { fileProblem, UsageError } from './options.js'

/**
 * Why a SQLite file cannot be opened, in words, where the driver would only say "unable to
 * open database file": the path is a directory, or its directory does not exist; or a file
 * this process cannot write.
 */
function sqlitePathProblem(path: string): string | undefined {
  if (path === ':memory:' || path.startsWith('file:')) return undefined
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat?.isDirectory()) return `${path} is a directory`
  if (stat !== undefined) {
    // Opened read-only, it would serve reads and answer every create 503 "try again later", for ever.
    // Opened for writing, not access(W_OK): Deno asks for --allow-sys to tell the user's id for that.
    try {
      closeSync(openSync(path, 'r+'))
    } catch (error) {
      return `${path} cannot be written: ${fileProblem(error as NodeJS.ErrnoException)}`
    }
    return undefined
  }
  const directory = dirname(resolve(path))
  try {
    if (!statSync(directory).isDirectory()) return `${directory} is not a directory`
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException
    return code === 'ENOENT'
      ? `directory ${directory} does not exist`
      : `${directory}: ${fileProblem(error as NodeJS.ErrnoException)}`
  }
  return undefined
}

/**
 * `memory`, `sqlite:PATH` (`sqlite::memory:` for an in-memory SQLite),
 * `postgres://…` / `postgresql://…` (`?schema=NAME` puts the tables in that schema)
 * or `mysql://…`.
 */
export async function openStore(db: string, from = '--db'): Promise<ResettablePetStore> {
  if (db === 'memory') return memoryStore()
  // Group commit is on unless PETSTORE_BATCH_CREATES=0: the bench (bench/create-scale.ts) compares both.
  const batchCreates = process.env.PETSTORE_BATCH_CREATES !== '0'
  if (db.startsWith('sqlite:')) {
    const path = db.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    if (path === '') throw new UsageError(`${from} sqlite: needs a file path, e.g. sqlite:./petstore.db`)
    const problem = sqlitePathProblem(path)
    if (problem !== undefined) throw new UsageError(`${from} ${db}: ${problem}`)
    // Loaded only when asked for: kysely and a driver are most of the binary's start-up time.
    const { sqliteStore } = await import('../src/store/sql/sqlite.js')
    return sqliteStore({ path, batchCreates })
  }
  if (/^postgres(ql)?:\/\//.test(db)) {
    const { postgresStore } = await import('../src/store/sql/postgres.js')
    // `schema` is ours, not a connection parameter: take it out before pg sees the URL.
    const url = new URL(db)
    const schema = url.searchParams.get('schema')
    if (schema === null) return postgresStore({ connectionString: db }, { batchCreates })
    url.searchParams.delete('schema')
    return postgresStore({ connectionString: url.href }, { schema: schema || undefined, batchCreates })
  }
  if (db.startsWith('mysql://')) {
    const { mysqlStore } = await import('../src/store/sql/mysql.js')
    return mysqlStore({ uri: db }, { batchCreates })
  }
  // Never echo credentials of a mistyped URL.
  throw new UsageError(`${from} must be memory, sqlite:PATH, postgres://… or mysql://…, got "${redactedUrl(db)}"`)
}
