/**
 * `d1Store`: pets in a Cloudflare D1 database (SQLite on Cloudflare), through
 * the Worker's D1 binding.
 *
 * @module
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteQueryCompiler,
  sql,
  type TableMetadata,
} from 'kysely'
import type { JsonPage, ListQuery, PetStore } from '../store.js'
import {
  EMPTY_PAGE,
  HOT_PATH,
  type HotPath,
  type HotPathTarget,
  type JsonPageRow,
  type PetRow,
  pageOfJson,
  storedPet,
  toPet,
} from './hot-path.js'
import { type KyselyStoreOptions, kyselyStore } from './kysely.js'
import { pageParameters, sqliteStatements } from './sqlite-statements.js'

/**
 * The few members of a D1 prepared statement this store uses: declared here
 * so the package needs no `@cloudflare/workers-types` (a Worker's own
 * `D1Database` fits it).
 */
export interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement
  first<T = Record<string, unknown>>(): Promise<T | null>
  all<T = Record<string, unknown>>(): Promise<{ results: T[]; meta: D1Meta }>
  run(): Promise<{ meta: D1Meta }>
}

/** What D1 reports about a statement that ran. */
export interface D1Meta {
  last_row_id?: number
  changes?: number
}

/** The members of a D1 binding (`env.DB`) this store uses. */
export interface D1Database {
  prepare(query: string): D1PreparedStatement
}

/** Options of {@link d1Store}. */
export type D1StoreOptions = Pick<KyselyStoreOptions, 'table' | 'migrationTable'>

/** One D1 "connection": D1 has no sessions, so every statement stands alone and commits at once. */
class D1Connection implements DatabaseConnection {
  constructor(private readonly db: D1Database) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { results, meta } = await this.db
      .prepare(query.sql)
      .bind(...query.parameters)
      .all<R>()
    const changes = meta.changes ?? 0
    return {
      rows: results ?? [],
      numAffectedRows: BigInt(changes),
      insertId: changes > 0 && meta.last_row_id !== undefined ? BigInt(meta.last_row_id) : undefined,
    }
  }

  // biome-ignore lint/correctness/useYield: D1 answers whole results; kysely calls this only for .stream().
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('d1Store: D1 cannot stream query results')
  }
}

/**
 * kysely over D1, for the schema only: its `Migrator` runs the same
 * migrations as `sqliteStore` (so the table is the same), without a
 * transaction, as it does for every SQLite dialect (SQLite's adapter
 * declares no transactional DDL); each migration is idempotent.
 */
class D1Driver implements Driver {
  readonly #connection: D1Connection
  constructor(db: D1Database) {
    this.#connection = new D1Connection(db)
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection
  }
  async beginTransaction(): Promise<void> {
    throw new Error('d1Store: D1 has no interactive transactions')
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/**
 * The tables, for the `Migrator`, which asks whether its own exist. kysely's
 * `SqliteIntrospector` reads columns through `pragma_table_info()`, which D1
 * refuses (SQLITE_AUTH); names are all the Migrator needs. D1's own tables
 * (`_cf_…`) are left out.
 */
function d1Introspector(kysely: Kysely<any>): DatabaseIntrospector {
  const getTables = async (): Promise<TableMetadata[]> => {
    const { rows } = await sql<{ name: string; type: string }>`select name, type from sqlite_master
      where type in ('table', 'view') and substr(name, 1, 7) <> 'sqlite_' and substr(name, 1, 4) <> '_cf_'`.execute(
      kysely,
    )
    return rows.map(({ name, type }) => ({ name, isView: type === 'view', columns: [] }))
  }
  return {
    getSchemas: async () => [],
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  }
}

function d1Dialect(db: D1Database): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new D1Driver(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: d1Introspector,
  }
}

/**
 * The hot path of `d1Store`: the statements of `sqliteStore`, prepared once
 * and bound per request. Each is one D1 query, committed on its own.
 *
 * Ids stay unique and in commit order without a transaction: the pets table
 * is AUTOINCREMENT, and a D1 database runs one statement at a time (it lives
 * in one Durable Object, single-threaded), so the insert that takes an id
 * commits before the next insert runs. A reader walking `next` links can
 * therefore never see id n+1 before id n. test/workerd.test.ts checks this
 * under concurrent creates on workerd.
 */
function d1HotPath(db: D1Database, target: HotPathTarget): HotPath {
  const sql = sqliteStatements(target)
  const rowPages = sql.rowPages.map((text) => db.prepare(text))
  const jsonPages = sql.jsonPages.map((text) => db.prepare(text))
  const byId = db.prepare(sql.byId)
  const insert = db.prepare(sql.insert)
  const page = ({ status }: ListQuery) => (status === undefined ? 0 : 1)
  const parameters = ({ status, after, limit }: ListQuery) => pageParameters(status, after, limit)

  return {
    async get(id) {
      const row = await byId.bind(id).first<PetRow>()
      return row ? toPet(row) : undefined
    },
    async list(query) {
      const { results } = await rowPages[page(query)]!.bind(...parameters(query)).all<PetRow>()
      return results.map(toPet)
    },
    async listJson(query): Promise<JsonPage> {
      const { limit } = query
      if (!(limit >= 1)) return EMPTY_PAGE
      const statement = jsonPages[page(query)]!.bind(...parameters({ ...query, limit: limit + 1 }))
      return pageOfJson((await statement.first<JsonPageRow>()) ?? undefined, limit)
    },
    async create(pet) {
      const { meta } = await insert.bind(pet.name, pet.categoryId, pet.status ?? null).run()
      if (meta.last_row_id === undefined) throw new Error('d1Store: D1 reported no id for the new pet')
      return storedPet(meta.last_row_id, pet)
    },
  }
}

/**
 * A store in a Cloudflare D1 database: pass the Worker's binding. The table
 * (the same as `sqliteStore`'s) is created on first use by the same
 * migrations, recorded in `petstore_migration`.
 *
 * @example
 * ```ts
 * import { createPetstore } from 'petstore-server'
 * import { type D1Database, d1Store } from 'petstore-server/d1'
 *
 * let petstore: ((request: Request) => Promise<Response>) | undefined
 * export default {
 *   fetch(request: Request, env: { DB: D1Database; PETSTORE_API_KEYS: string }) {
 *     petstore ??= createPetstore({ store: d1Store(env.DB), keys: env.PETSTORE_API_KEYS.split(',') })
 *     return petstore(request)
 *   },
 * }
 * ```
 */
export function d1Store(db: D1Database, options: D1StoreOptions = {}): PetStore {
  if (typeof db?.prepare !== 'function') {
    throw new TypeError('d1Store: pass a D1 binding (env.DB), which has prepare()')
  }
  return kyselyStore(new Kysely({ dialect: d1Dialect(db) }), {
    ...options,
    destroyOnClose: true,
    [HOT_PATH]: (target: HotPathTarget) => d1HotPath(db, target),
  } as KyselyStoreOptions)
}
