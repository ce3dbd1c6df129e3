/**
 * `kyselyStore`: pets in any SQL database kysely speaks to. The SQLite,
 * PostgreSQL and MySQL stores are this store over their dialects.
 *
 * @module
 */
import { type Kysely, Migrator } from 'kysely'
import { PetstoreError } from '../errors.js'
import type { Pet, PetStatus } from '../schemas.js'
import type { ListQuery, PetStore } from '../store.js'
import { migrations, sqlFamily } from './migrations.js'

/** Options of {@link kyselyStore}. */
export interface KyselyStoreOptions {
  /** Table of pets. @default 'petstore_pets' */
  table?: string
  /** Table where applied migrations are recorded (and `<name>_lock`). @default 'petstore_migration' */
  migrationTable?: string
  /** Destroy the kysely instance on `close()`. Leave it off for a database your application owns. @default false */
  destroyOnClose?: boolean
}

interface PetRow {
  id: number | string | bigint
  name: string
  category_id: number | string | bigint
  status: string | null
}

// Errors that mean "the database is not there right now", not "this request is wrong".
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  '57P01', // postgres: admin shutdown
  '57P03', // postgres: cannot connect now
  '53300', // postgres: too many connections
  'PROTOCOL_CONNECTION_LOST',
])

/** Whether `error` says the database cannot be reached (→ 503), judged by its code. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return (
    typeof code === 'string' &&
    (UNAVAILABLE.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY'))
  )
}

/** Rows hold int8 as numbers, strings (pg) or bigints; the API speaks numbers. */
function toPet(row: PetRow): Pet {
  const pet: Pet = { id: Number(row.id), name: row.name, categoryId: Number(row.category_id) }
  if (row.status !== null) pet.status = row.status as PetStatus
  return pet
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
export function kyselyStore(db: Kysely<any>, options: KyselyStoreOptions = {}): PetStore {
  const table = options.table ?? 'petstore_pets'
  const migrationTable = options.migrationTable ?? 'petstore_migration'
  const family = sqlFamily(db)
  let ready: Promise<void> | undefined
  let closing: Promise<void> | undefined

  async function migrate(): Promise<void> {
    const set = migrations(table, family)
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => set },
      migrationTableName: migrationTable,
      migrationLockTableName: `${migrationTable}_lock`,
    })
    // Processes starting together on one SQLite file can collide; the loser retries.
    for (let attempt = 1; ; attempt++) {
      const { error } = await migrator.migrateToLatest()
      if (!error) return
      if (attempt >= 5 || !isUnavailable(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt))
    }
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

  const columns = ['id', 'name', 'category_id', 'status'] as const

  return {
    create: (pet) =>
      run(async () => {
        const values: Omit<PetRow, 'id'> = { name: pet.name, category_id: pet.categoryId, status: pet.status ?? null }
        if (family !== 'mysql') {
          const row = await db.insertInto(table).values(values).returning(columns).executeTakeFirstOrThrow()
          return toPet(row as PetRow)
        }
        const { insertId } = await db.insertInto(table).values(values).executeTakeFirstOrThrow()
        return toPet({ ...values, id: insertId as bigint })
      }),
    get: (id) =>
      run(async () => {
        const row = await db.selectFrom(table).select(columns).where('id', '=', id).executeTakeFirst()
        return row && toPet(row as PetRow)
      }),
    list: ({ status, limit, after }: ListQuery) =>
      run(async () => {
        let query = db.selectFrom(table).select(columns)
        if (status !== undefined) query = query.where('status', '=', status)
        if (after !== undefined) query = query.where('id', '>', after)
        const rows = await query.orderBy('id').limit(limit).execute()
        return (rows as PetRow[]).map(toPet)
      }),
    ping: () =>
      run(async () => {
        await db.selectFrom(table).select('id').limit(1).execute()
      }),
    close() {
      closing ??= options.destroyOnClose ? db.destroy() : Promise.resolve()
      return closing
    },
  }
}
