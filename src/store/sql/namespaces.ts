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
import { type NamespaceMaker, type ResettablePetStore, testControlOf } from '../store.js'
import type { SqlFamily } from './migrations.js'
import { replacePets } from './replace-pets.js'
import { generationTable } from './schema-history.js'

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

/** The first `length` hex digits of the SHA-256 of `text`: short table names, for any name, in any case. */
async function hexDigest(text: string, length: number): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, length)
}

/**
 * The tables of namespace `name`. A name is up to 64 characters, and SQLite and MySQL fold the case
 * of some names, so the table is named by a digest: `petstore_ns_<16 hex>`, 28 characters, whatever
 * the parent's table (whose name is in the digest) is called.
 */
export async function namespaceTables(parent: string, name: string): Promise<NamespaceTables> {
  const table = `petstore_ns_${await hexDigest(`${parent}\u0000${name}`, 16)}`
  return { table, migrationTable: `${table}_migration` }
}

/** The tables a store over `tables` creates, which a deleted namespace drops. */
const createdTables = ({ table, migrationTable }: NamespaceTables) => [
  table,
  generationTable({ table, schema: undefined }).table,
  migrationTable,
  `${migrationTable}_lock`,
]

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
    const name = table === 'petstore_pets' ? 'petstore_namespaces' : `petstore_namespaces_${await hexDigest(table, 12)}`
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
    const tables = await namespaceTables(table, name)
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
      for (const created of createdTables(await namespaceTables(table, name))) {
        await inSchema().schema.dropTable(created).ifExists().execute()
      }
    },
  }
}
