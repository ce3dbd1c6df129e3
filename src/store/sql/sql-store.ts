/**
 * The runtime every SQL store shares: the schema migrated once through
 * kysely's `Migrator`, creates through group commit, and a database that
 * cannot be reached answered 503. The statements are each dialect's (see
 * dialects/): the SQLite, PostgreSQL and MySQL stores run them on their own
 * driver, `kyselyStore` through the kysely instance it is given.
 *
 * @module
 */
import { type Dialect, Kysely, Migrator } from 'kysely'
import type { Pet } from '../../api/schemas.js'
import { PetstoreError } from '../../shared/petstore-error.js'
import {
  builtInStore,
  READ_CALLS,
  type ResettablePetStore,
  STORE_CALLS,
  type Store,
  type StoreCallName,
  storeCalls,
} from '../store.js'
import {
  isBusy,
  isMigrationRace,
  isUnavailable,
  mapped,
  mappingErrors,
  retryingBusy,
  unavailable,
} from './database-errors.js'
import { groupCommit } from './group-commit.js'
import type { HotPath, HotPathTarget, OpenHotPath } from './hot-path.js'
import { storedPet } from './hot-path.js'
import { keyedCreates, keyedRowSize } from './keyed-sql.js'
import { querySpanPlugin } from './kysely-spans.js'
import { migrations, sqlFamily } from './migrations.js'
import { sqlNamespaces } from './namespaces.js'
import type { DbSystem } from './query-spans.js'
import { replacePets } from './replace-pets.js'
import { KYSELY_STORE_OPTIONS, type KyselyStoreOptions, sqlStoreOptions } from './store-options.js'
import { targetOf, throughKysely } from './through-kysely.js'

type Calls = Pick<HotPath, Exclude<StoreCallName, 'createKeyed'>>

/** The reads of a synchronous hot path (SQLite), answered at once with their failures mapped. */
function readsNow(statements: HotPath): Partial<Calls> {
  const reads: Record<string, unknown> = {}
  for (const name of STORE_CALLS) {
    if (!READ_CALLS.has(name)) continue
    const call = statements[name as keyof Calls] as (arg: unknown) => unknown
    reads[name] = mappingErrors((arg) => call(arg))
  }
  return reads as Partial<Calls>
}

/**
 * A store over `given`. Once the schema exists, `openOwn` prepares the dialect's statements on
 * the store's own driver; without it (`kyselyStore`), kysely runs them, each create on its own.
 */
export function sqlStore(given: Kysely<any>, options: KyselyStoreOptions, openOwn?: OpenHotPath): ResettablePetStore {
  // The SQL stores over this one have checked their options in their own name: these pass.
  const { table, migrationTable, schema: givenSchema } = sqlStoreOptions('kyselyStore', options, KYSELY_STORE_OPTIONS)
  const family = sqlFamily(given)
  /** `db.system` of the query spans; a MySQL-family server says at migration whether it is MariaDB. */
  let system: DbSystem = family === 'postgres' ? 'postgresql' : family
  // Query spans for what kysely compiles (see kysely-spans.ts): the migrations, the Migrator's own queries.
  const db = given.withPlugin(querySpanPlugin(() => system))
  let ready: Promise<void> | undefined
  let closing: Promise<void> | undefined
  /** The statements the store serves, once the schema exists: on its own driver where it has one. */
  let hot: HotPath | undefined
  /** Its reads answered at once, where it has them (SQLite). */
  let now: Partial<Calls> | undefined
  /** The statements through kysely: `kyselyStore`'s, and every store's once closed (kysely then refuses them). */
  let viaKysely: HotPath | undefined
  /** The schema the tables are in, once migrated: the given one, or PostgreSQL's current schema. */
  let schemaName = givenSchema

  async function migrate(): Promise<void> {
    const target = await targetOf(db, family, { table, schema: givenSchema })
    const { schema } = target
    schemaName = schema
    system = target.system ?? system
    const steps = migrations(table, family, schema)
    if (!(await migrated(schema, Object.keys(steps)))) {
      const migrator = new Migrator({
        db,
        provider: { getMigrations: async () => steps },
        migrationTableName: migrationTable,
        migrationLockTableName: `${migrationTable}_lock`,
        migrationTableSchema: schema,
      })
      // Processes starting together on one database can collide (see isMigrationRace); the loser retries.
      for (let attempt = 1; ; attempt++) {
        const { error } = await migrator.migrateToLatest()
        if (!error) break
        if (attempt >= 8 || !isMigrationRace(error)) throw error
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 20))
      }
    }
    viaKysely = throughKysely(db, family, target)
    // Prepared only now: the statements name a table that exists from here on.
    const own = await openOwn?.(target)
    if (closing === undefined) {
      hot = own === undefined ? viaKysely : options.batchCreates !== false ? batched(own) : own
      now = own?.synchronous ? readsNow(own) : undefined
    }
  }

  /** `statements` with creates through group commit, when they can insert many rows at once. */
  function batched(statements: HotPath): HotPath {
    const { insertMany } = statements
    if (insertMany === undefined) return statements
    // A constraint or bad data rolled the batch back: its halves are tried again. A lost
    // connection may have committed it: every caller in it gets the 503, as each would alone.
    // A lock conflict was tried again already (see retryingBusy): halves would only wait longer.
    const canSplit = (error: unknown) => !isUnavailable(error) && !isBusy(error)
    const insert = groupCommit(insertMany, {
      // Names are at most 255 code points: a batch of 256 stays well under the 1 MiB default.
      sizeOf: (pet) => 64 + pet.name.length * 3,
      take: statements.batchOf,
      canSplit,
    })
    // Keyed creates queue apart, each pet with its key in the batch that commits it: the creates
    // without a key keep their queue as it was. A key another process stored fails its own row alone.
    const keys = statements.keys
    const insertKeyed = groupCommit(keys.insertMany, { sizeOf: keyedRowSize, canSplit })
    return {
      ...statements,
      create: async (pet) => storedPet(await insert(pet), pet),
      keys: { ...keys, insert: insertKeyed },
    }
  }

  /**
   * Whether the migration table records every step already. The Migrator reads the database's
   * catalog three times before it finds nothing to do, slowly where the database holds many
   * tables; a schema that is current costs this one read instead. Anything else (no table yet,
   * a step missing) is left to the Migrator.
   */
  async function migrated(schema: string | undefined, names: readonly string[]): Promise<boolean> {
    try {
      const rows = await (schema === undefined ? db : db.withSchema(schema))
        .selectFrom(migrationTable)
        .select('name')
        .execute()
      // Steps recorded that this version does not know (a newer one ran): the Migrator refuses them.
      const done = new Set(rows.map((row) => row.name))
      return done.size === names.length && names.every((name) => done.has(name))
    } catch {
      return false
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
      throw mapped(error)
    }
  }

  /**
   * Runs `work` on the store's statements: at once when the schema is known to exist (no await
   * in between, SQLite answers synchronously), else after the migration (or through kysely, closed).
   */
  function fast<T>(work: (hot: HotPath) => T | Promise<T>): Promise<T> {
    const statements = hot
    if (statements === undefined) return run(async () => work(hot ?? viaKysely!))
    try {
      const result = work(statements)
      return result instanceof Promise ? result.catch(unavailable) : Promise.resolve(result)
    } catch (error) {
      return unavailable(error)
    }
  }

  const keyed = keyedCreates()
  const store: Store = {
    ...storeCalls((name) => (arg) => {
      const read = now?.[name as keyof Calls] as ((arg: unknown) => unknown) | undefined
      return read !== undefined
        ? read(arg)
        : fast((statements) => (statements[name as keyof Calls] as (arg: unknown) => unknown)(arg))
    }),
    createKeyed: (request) => fast((statements) => keyed(statements.keys, (id) => statements.get(id), request)),
    ping: () => run(async () => (hot ?? viaKysely!).ping()),
    close() {
      // Later calls go to kysely, which refuses them once destroyed.
      hot = undefined
      now = undefined
      closing ??= options.destroyOnClose ? db.destroy() : Promise.resolve()
      return closing
    },
  }
  // Test control (seed, reset): after the migration, where the schema is known.
  const replace = (pets: readonly Pet[]) =>
    run(async () => {
      // A reset that lost a deadlock to a create was rolled back whole: it is tried again.
      await retryingBusy(() => replacePets(db, { family, table, schema: schemaName }, pets))
    })
  const namespaces = sqlNamespaces({
    db,
    family,
    table,
    schema: () => schemaName,
    ready: () => run(async () => {}),
    // On this store's connection or pool, which stays open while the parent is.
    make: (tables) => sqlStore(given, { ...options, ...tables, schema: schemaName, destroyOnClose: false }, openOwn),
  })
  return builtInStore(store, undefined, replace, namespaces)
}

/** A store on a driver's pool (`pg`, `mysql2`): how it gets the pool, lends it to kysely, and runs its dialect. */
export interface Pooled<P, Lent> {
  /** The pool the application passed, if it did: it stays the application's. */
  given: P | undefined
  /** Creates the store's own pool, on first use. */
  create(): Promise<P>
  /** `pool` as kysely's dialect borrows its connections; `owned` when the store ends it on close. */
  lend(pool: P, owned: boolean): Lent
  dialect(pool: Lent | (() => Promise<Lent>)): Dialect
  /** The dialect's statements on the pool itself, once the schema exists. */
  open(pool: P, target: HotPathTarget): HotPath
}

/**
 * A store of `owner`'s on the pool of `pooled`: kysely migrates through it, the dialect's
 * statements then run on it directly. `pool()` is the pool, once there is one.
 */
export function pooledStore<P, Lent>(
  owner: string,
  options: KyselyStoreOptions,
  pooled: Pooled<P, Lent>,
): { store: ResettablePetStore; pool: () => P | undefined } {
  let pool = pooled.given
  const lent =
    pool !== undefined
      ? pooled.lend(pool, false)
      : async () => {
          const created = await pooled.create()
          pool = created
          return pooled.lend(created, true)
        }
  const store = sqlStore(
    new Kysely({ dialect: pooled.dialect(lent) }),
    { ...options, destroyOnClose: true },
    (target) => {
      // The migrations have run through kysely, so the pool is open.
      if (pool === undefined) throw new Error(`${owner}: the pool is not open`)
      return pooled.open(pool, target)
    },
  )
  return { store, pool: () => pool }
}

/** The driver `name` as `load` imports it on first use; told as missing, in `owner`'s name, when it is not installed. */
export async function loadDriver<T>(owner: string, name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (cause) {
    throw PetstoreError.missingDriver(`${owner} needs ${name}: npm install ${name}`, cause)
  }
}
