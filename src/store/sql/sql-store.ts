/**
 * The runtime every SQL store shares: the schema migrated once through
 * kysely's `Migrator`, creates through group commit, and a database that
 * cannot be reached answered 503. `kyselyStore` is this over any kysely
 * instance; the SQLite, PostgreSQL and MySQL stores add the statements of
 * their dialect (a {@link HotPath}).
 *
 * @module
 */
import { type Kysely, Migrator, sql } from 'kysely'
import { PetstoreError } from '../../api/errors.js'
import { jsonPageOf, oneMore } from '../../api/pet-json.js'
import type { Pet } from '../../api/schemas.js'
import { builtInStore, type JsonPage, type ListQuery, type ResettablePetStore, type Store } from '../store.js'
import { isMigrationRace, isUnavailable, mappingErrors, unavailable } from './database-errors.js'
import { groupCommit } from './group-commit.js'
import { categoryIdText, type HotPath, type OpenHotPath, type PetRow, storedPet, toPet } from './hot-path.js'
import { querySpanPlugin } from './kysely-spans.js'
import { migrations, sqlFamily } from './migrations.js'
import type { DbSystem } from './query-spans.js'
import { replacePets } from './replace-pets.js'
import { KYSELY_STORE_OPTIONS, type KyselyStoreOptions, sqlStoreOptions } from './store-options.js'

/** The reads of a synchronous hot path (SQLite), answered at once with their failures mapped. */
interface SyncReads {
  get(id: number): Pet | undefined
  listJson(query: ListQuery): JsonPage
}

function readsNow(statements: HotPath): SyncReads {
  return {
    get: mappingErrors<number, Pet | undefined>((id) => statements.get(id)),
    listJson: mappingErrors<ListQuery, JsonPage>((query) => statements.listJson(query)),
  }
}

/**
 * A store over `given`, with the statements `openHotPath` prepares once the
 * schema exists (none: kysely's query builder serves every call).
 */
export function sqlStore(
  given: Kysely<any>,
  options: KyselyStoreOptions,
  openHotPath?: OpenHotPath,
): ResettablePetStore {
  // The SQL stores over this one have checked their options in their own name: these pass.
  const { table, migrationTable, schema: givenSchema } = sqlStoreOptions('kyselyStore', options, KYSELY_STORE_OPTIONS)
  const family = sqlFamily(given)
  /** `db.system` of the query spans; a MySQL-family server says at migration whether it is MariaDB. */
  let system: DbSystem = family === 'postgres' ? 'postgresql' : family
  // Query spans for what goes through kysely (see kysely-spans.ts): the same executor, one plugin more.
  const db = given.withPlugin(querySpanPlugin(() => system))
  let schemaName = givenSchema
  let scoped = schemaName ? db.withSchema(schemaName) : db
  let ready: Promise<void> | undefined
  let closing: Promise<void> | undefined
  /**
   * The statements of the hot path, once the schema exists: the SQLite and PostgreSQL stores
   * serve get, list and create on statements they prepared once (see there why), and kysely
   * keeps the schema, the migrations, ping, and every other dialect.
   */
  let hot: HotPath | undefined
  /** Its reads answered at once, where it has them (SQLite). */
  let now: SyncReads | undefined

  async function migrate(): Promise<void> {
    let schema = givenSchema
    if (schema === undefined && family === 'postgres') {
      // The Migrator looks for its tables in every schema unless told one: name the one tables go to.
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
      schema = rows[0]?.schema ?? undefined
      if (schema !== undefined) scoped = db.withSchema(schema)
      schemaName = schema
    }
    if (family === 'mysql') {
      const { rows } = await sql<{ version: string }>`select version() as version`.execute(db)
      if (/mariadb/i.test(String(rows[0]?.version))) system = 'mariadb'
    }
    const set = migrations(table, family, schema)
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => set },
      migrationTableName: migrationTable,
      migrationLockTableName: `${migrationTable}_lock`,
      migrationTableSchema: schema,
    })
    // Processes starting together on one database can collide (see RACE); the loser retries.
    for (let attempt = 1; ; attempt++) {
      const { error } = await migrator.migrateToLatest()
      if (!error) break
      if (attempt >= 8 || !isMigrationRace(error)) throw error
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 20))
    }
    // Prepared only now: the statements name a table that exists from here on.
    const opened = await openHotPath?.({ table, schema, system })
    if (closing === undefined) {
      hot = opened && options.batchCreates !== false ? batched(opened) : opened
      now = opened?.synchronous ? readsNow(opened) : undefined
    }
  }

  /** `statements` with creates through group commit, when they can insert many rows at once. */
  function batched(statements: HotPath): HotPath {
    const { insertMany } = statements
    if (insertMany === undefined) return statements
    const insert = groupCommit(insertMany, {
      // Names are at most 255 code points: a batch of 256 stays well under the 1 MiB default.
      sizeOf: (pet) => 64 + pet.name.length * 3,
      take: statements.batchOf,
      // A constraint or bad data rolled the batch back: its halves are tried again. A lost
      // connection may have committed it: every caller in it gets the 503, as each would alone.
      canSplit: (error) => !isUnavailable(error),
    })
    return { ...statements, create: async (pet) => storedPet(await insert(pet), pet) }
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

  /**
   * Runs `work` on the hot path when the store has one: at once when the schema is known to
   * exist (no await in between, SQLite answers synchronously), else after the migration.
   */
  function fast<T>(work: (hot: HotPath) => T | Promise<T>, slow: () => Promise<T>): Promise<T> {
    const statements = hot
    if (statements === undefined) return run(() => (hot ? Promise.resolve(work(hot)) : slow()))
    try {
      const result = work(statements)
      return result instanceof Promise ? result.catch(unavailable) : Promise.resolve(result)
    } catch (error) {
      return unavailable(error)
    }
  }

  const columns = ['id', 'name', 'category_id', 'status'] as const
  /** What rows are read as: category_id as decimal text, which every driver reads exactly (see `petColumns`). */
  const selection = ['id', 'name', sql.raw<string>(categoryIdText(family)).as('category_id'), 'status'] as const

  /**
   * Inserts a pet so that pets become visible in the order of their ids.
   * PostgreSQL and MySQL hand out ids before commit, so concurrent writers can
   * commit id 34 before 33; a client paging by id could pass 33 before it
   * exists and never see it. A lock held from the id's allocation to the
   * commit keeps commit order equal to id order, across processes too. (SQLite
   * writes one transaction at a time already.) It costs one round trip or two
   * per create, and serializes creates on one table.
   */
  async function insertInIdOrder(values: Omit<PetRow, 'id'>): Promise<PetRow> {
    const lockName = `petstore:${schemaName ?? ''}.${table}`
    if (family === 'postgres') {
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${lockName}))`.execute(trx)
        const target = schemaName ? trx.withSchema(schemaName) : trx
        return (await target.insertInto(table).values(values).returning(columns).executeTakeFirstOrThrow()) as PetRow
      })
    }
    if (family === 'mysql') {
      // A named lock on one connection: the autocommitted insert is durable before the lock is let go.
      return db.connection().execute(async (connection) => {
        const { rows } = await sql<{ got: number | null }>`select get_lock(sha1(${lockName}), 10) as got`.execute(
          connection,
        )
        if (Number(rows[0]?.got) !== 1)
          throw PetstoreError.unavailable(new Error('timed out waiting for the insert lock'))
        try {
          const target = schemaName ? connection.withSchema(schemaName) : connection
          const { insertId } = await target.insertInto(table).values(values).executeTakeFirstOrThrow()
          return { ...values, id: insertId as bigint }
        } finally {
          await sql`select release_lock(sha1(${lockName}))`.execute(connection)
        }
      })
    }
    return (await scoped.insertInto(table).values(values).returning(columns).executeTakeFirstOrThrow()) as PetRow
  }

  /** The pets of `query` as kysely reads them, where there is no hot path. */
  async function listRows({ status, limit, after }: ListQuery): Promise<Pet[]> {
    let select = scoped.selectFrom(table).select(selection)
    if (status !== undefined) select = select.where('status', '=', status)
    if (after !== undefined) select = select.where('id', '>', after)
    const rows = await select.orderBy('id').limit(limit).execute()
    return (rows as PetRow[]).map(toPet)
  }

  const store: Store = {
    create: (pet) =>
      fast(
        (statements) => statements.create(pet),
        async () => {
          const values: Omit<PetRow, 'id'> = { name: pet.name, category_id: pet.categoryId, status: pet.status ?? null }
          // The pet as given, not as the row returns it: a driver may read category_id back rounded.
          return storedPet(Number((await insertInIdOrder(values)).id), pet)
        },
      ),
    get: (id) =>
      now !== undefined
        ? now.get(id)
        : fast(
            (statements) => statements.get(id),
            async () => {
              const row = await scoped.selectFrom(table).select(selection).where('id', '=', id).executeTakeFirst()
              return row && toPet(row as PetRow)
            },
          ),
    list: (query) =>
      fast(
        (statements) => statements.list(query),
        () => listRows(query),
      ),
    // Only stores with a hot path write pages as JSON: kysely's own rows are written by the handler.
    page: (query) =>
      now !== undefined
        ? now.listJson(query)
        : fast(
            (statements) => statements.listJson(query),
            async () => jsonPageOf(await listRows(oneMore(query)), query.limit),
          ),
    ping: () =>
      run(async () => {
        await scoped.selectFrom(table).select('id').limit(1).execute()
      }),
    close() {
      // Later calls go to kysely, which refuses them once destroyed, as before there was a hot path.
      hot = undefined
      now = undefined
      closing ??= options.destroyOnClose ? db.destroy() : Promise.resolve()
      return closing
    },
  }
  // Test control (seed, reset): after the migration, where the schema is known.
  return builtInStore(store, undefined, (pets) =>
    run(() => replacePets(db, { family, table, schema: schemaName }, pets)),
  )
}
