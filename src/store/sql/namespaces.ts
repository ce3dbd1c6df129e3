/**
 * Namespaces of a SQL store: each a pets table of its own beside the store's, made by the same
 * store function on the same connection or pool, so every statement stays written once. A table
 * of names records which exist, for every process on the database: it bounds their number, and
 * tells a process that another one deleted a namespace it still has open.
 *
 * @module
 */
import type { Kysely, Transaction } from 'kysely'
import type { Pet } from '../../api/schemas.js'
import { sha256Hex } from '../../util/sha256.js'
import { type NamespaceMaker, type ResettablePetStore, testControlOf } from '../store.js'
import type { SqlFamily } from './migrations.js'
import { replacePets } from './replace-pets.js'
import { createdTables } from './store-options.js'

/** The tables a namespace's store makes, named from its parent's table and its name. */
export interface NamespaceTables {
  table: string
  migrationTable: string
}

/** What the namespaces of one SQL store work with. */
export interface SqlNamespacesParts {
  db: Kysely<any>
  family: SqlFamily
  /** The parent's pets table. */
  table: string
  /** The schema of the parent's tables, once it is migrated (`undefined`: the connection's). */
  schema(): string | undefined
  /** Resolves once the parent's schema exists. */
  ready(): Promise<void>
  /** The store over `tables`, on the parent's connection, not closing it. */
  make(tables: NamespaceTables): ResettablePetStore
}

/**
 * The tables of namespace `name`. A name is up to 64 characters, and SQLite and MySQL fold the case
 * of some names, so the table is named by a digest: `petstore_ns_<16 hex>`, 28 characters, whatever
 * the parent's table (whose name is in the digest) is called.
 */
export function namespaceTables(parent: string, name: string): NamespaceTables {
  // The first 64 bits of a digest: short table names, for any name, in any case.
  const table = `petstore_ns_${sha256Hex(`${parent}\u0000${name}`).slice(0, 16)}`
  return { table, migrationTable: `${table}_migration` }
}

/** The namespaces of the SQL store that `parts` describe. */
export function sqlNamespaces(parts: SqlNamespacesParts): NamespaceMaker {
  const { db, family, table } = parts
  const open = new Map<string, ResettablePetStore>()
  const opening = new Map<string, Promise<ResettablePetStore | undefined>>()
  let names: Promise<string> | undefined

  const inSchema = () => {
    const schema = parts.schema()
    return schema === undefined ? db : db.withSchema(schema)
  }

  /** The table of names, made on first use: `petstore_namespaces`, or named after a table of another name. */
  async function namesTable(): Promise<string> {
    await parts.ready()
    const name =
      table === 'petstore_pets' ? 'petstore_namespaces' : `petstore_namespaces_${sha256Hex(table).slice(0, 12)}`
    await inSchema()
      .schema.createTable(name)
      .ifNotExists()
      .addColumn('name', 'varchar(64)', (column) => column.primaryKey())
      .execute()
    return name
  }

  const registry = () => {
    names ??= namesTable().catch((error) => {
      names = undefined
      throw error
    })
    return names
  }

  async function exists(name: string): Promise<boolean> {
    const found = await inSchema()
      .selectFrom(await registry())
      .select('name')
      .where('name', '=', name)
      .executeTakeFirst()
    return found !== undefined
  }

  async function count(): Promise<number> {
    const row = await inSchema()
      .selectFrom(await registry())
      .select((eb) => eb.fn.countAll().as('count'))
      .executeTakeFirstOrThrow()
    return Number(row.count)
  }

  /** Records `name` in `trx`: `false` when another process recorded it first (and seeded it). */
  async function claim(trx: Transaction<any>, name: string): Promise<boolean> {
    const into = (parts.schema() === undefined ? trx : trx.withSchema(parts.schema() as string)).insertInto(
      await registry(),
    )
    const insert =
      family === 'mysql'
        ? into.ignore().values({ name })
        : into.values({ name }).onConflict((conflict) => conflict.column('name').doNothing())
    const result = await insert.executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0
  }

  async function make(name: string, seed: readonly Pet[], max: number): Promise<ResettablePetStore | undefined> {
    const live = await exists(name)
    const known = open.get(name)
    if (live && known !== undefined) return known
    // Deleted by another process since this one opened it: its tables are new, or about to be.
    if (known !== undefined) {
      open.delete(name)
      await known.close?.()
    }
    if (!live && (await count()) >= max) return undefined
    const tables = namespaceTables(table, name)
    const store = parts.make(tables)
    // The migration makes the namespace's tables; then it is recorded and seeded in one transaction.
    await store.ping?.()
    await replacePets(db, { family, table: tables.table, schema: parts.schema() }, seed, (trx) => claim(trx, name))
    testControlOf(store)?.remember(seed)
    open.set(name, store)
    return store
  }

  return {
    open(name, seed, max) {
      // Two requests for a namespace at once make one store.
      let pending = opening.get(name)
      if (pending === undefined) {
        pending = make(name, seed, max).finally(() => opening.delete(name))
        opening.set(name, pending)
      }
      return pending
    },
    async drop(name) {
      const store = open.get(name)
      open.delete(name)
      await store?.close?.()
      await inSchema()
        .deleteFrom(await registry())
        .where('name', '=', name)
        .execute()
      const tables = namespaceTables(table, name)
      for (const created of createdTables(tables.table, tables.migrationTable)) {
        await inSchema().schema.dropTable(created).ifExists().execute()
      }
    },
  }
}
