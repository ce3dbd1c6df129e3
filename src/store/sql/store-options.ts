/**
 * Internal to the stores: the checks of the options the SQL stores share
 * (`table`, `migrationTable`, `schema`, `batchCreates`), each told in the
 * name of the factory that was called. They run once, when the store is
 * made: a bad name found there is a `TypeError` at start-up, where at the
 * first request it was a 500 on every request. Not exported by any entry point.
 *
 * @module
 */

import {
  kindOf,
  knownOptions,
  MAX_TIMER_MS,
  misnamedOptions,
  optionalBoolean,
  optionalString,
  optionsObject,
  shown,
  wholeNumber,
} from '../../util/option-checks.js'
import { generationTable, keysTable } from './schema-history.js'

/** The options of `kyselyStore` (see `KyselyStoreOptions`). */
export const KYSELY_STORE_OPTIONS = ['table', 'migrationTable', 'schema', 'destroyOnClose', 'batchCreates'] as const

/**
 * `value` as a timeout in ms: a whole number from 0 (no timeout) to 2^31 − 1 (24.8 days), the
 * longest `setTimeout` keeps (a longer one fires after 1 ms); PostgreSQL's timeouts stop there too.
 */
export function timeoutMs(owner: string, name: string, value: unknown): number {
  return wholeNumber(owner, name, value, { max: MAX_TIMER_MS })
}

/**
 * The longest name, in UTF-8 bytes, every SQL store keeps whole: PostgreSQL cuts a name to
 * 63 bytes (NAMEDATALEN − 1) without an error, so `<table>_migration` cut short could name
 * the pets table itself; MySQL refuses a name over 64 characters, which 63 bytes never are.
 * SQLite has no limit, but one rule for all keeps a store's names valid on each of them.
 */
const NAME_BYTES = 63

const utf8 = new TextEncoder()
const bytes = (text: string) => utf8.encode(text).length

/** The tables a SQL store over `table` creates: what a deleted namespace drops. */
export const createdTables = (table: string, migrationTable: string): string[] => [
  table,
  keysTable({ table, schema: undefined }).table,
  generationTable({ table, schema: undefined }).table,
  migrationTable,
  `${migrationTable}_lock`,
]

/**
 * The table that records the migrations of pets table `table`, unless one is named. Migrations
 * recorded for one pets table must not pass for another: each gets its own record.
 */
export const migrationTableOf = (table: string): string =>
  table === 'petstore_pets' ? 'petstore_migration' : `${table}_migration`

/** The names a SQL store's tables go by, checked. */
export interface StoreNames {
  table: string
  migrationTable: string
  schema: string | undefined
}

/** `value` as a table's name: a non-empty string without a `.`, or undefined. */
function tableName(owner: string, option: string, value: unknown): string | undefined {
  const name = optionalString(owner, option, value)
  if (name?.includes('.')) {
    // kysely reads "a.b" as table b of schema a, while the hot path quotes it whole: two tables.
    throw new TypeError(`${owner}: ${option} must be a name without ".", got ${shown(name)}`)
  }
  return name
}

/** PostgreSQL's limit, as the messages tell it. */
const KEPT = `must fit in the ${NAME_BYTES} bytes PostgreSQL keeps of a name`

/**
 * Throws unless `derived`, a name made of the option's `value` (`<table>_status_id`), fits in
 * {@link NAME_BYTES}: the message says how long the option may be, and `why`.
 */
function fits(owner: string, option: string, value: string, derived: string, why: string): void {
  const over = bytes(derived) - NAME_BYTES
  if (over <= 0) return
  throw new TypeError(
    `${owner}: ${option} must be at most ${bytes(value) - over} bytes of UTF-8, got ${bytes(value)}: ${why}`,
  )
}

/**
 * `value` as the name of a pets table: a non-empty string without a `.`, its index
 * (`<table>_status_id`) within 63 bytes of UTF-8; `'petstore_pets'` when undefined.
 */
export function petsTable(owner: string, value: unknown): string {
  const table = tableName(owner, 'table', value) ?? 'petstore_pets'
  fits(owner, 'table', table, `${table}_status_id`, `its index, <table>_status_id, ${KEPT}`)
  return table
}

/**
 * The table, migration table and schema of `options`, checked for `owner`: each a non-empty
 * string, every name the store creates from them (the index `<table>_status_id`, the
 * migration table and its `<migrationTable>_lock`) at most 63 bytes of UTF-8, and no two alike.
 */
export function storeNames(
  owner: string,
  options: { table?: unknown; migrationTable?: unknown; schema?: unknown },
): StoreNames {
  const table = tableName(owner, 'table', options.table) ?? 'petstore_pets'
  const given = tableName(owner, 'migrationTable', options.migrationTable)
  const schema = optionalString(owner, 'schema', options.schema)
  const migrationTable = given ?? migrationTableOf(table)
  // The longest name first, so that the limit told is the one that holds.
  if (given === undefined) {
    const why = `its migration lock table, <table>_migration_lock, ${KEPT} (or name a shorter migrationTable)`
    fits(owner, 'table', table, `${migrationTable}_lock`, why)
  }
  petsTable(owner, table)
  if (given !== undefined) {
    fits(owner, 'migrationTable', given, `${given}_lock`, `its lock table, <migrationTable>_lock, ${KEPT}`)
  }
  if (schema !== undefined) fits(owner, 'schema', schema, schema, `PostgreSQL keeps ${NAME_BYTES} bytes of a name`)
  // SQLite and MySQL (on some file systems) take names without regard to case: so do these checks.
  if (migrationTable.toLowerCase() === table.toLowerCase()) {
    const got = migrationTable === table ? `${shown(table)} for both` : `${shown(migrationTable)} and ${shown(table)}`
    throw new TypeError(`${owner}: migrationTable must name another table than table, got ${got}`)
  }
  const created = [...createdTables(table, migrationTable), `${table}_status_id`, `${table}_idem_exp`].map((name) =>
    name.toLowerCase(),
  )
  const twice = created.find((name, index) => created.indexOf(name) !== index)
  if (twice !== undefined) {
    throw new TypeError(
      `${owner}: table ${shown(table)} and migrationTable ${shown(migrationTable)} would both create ${shown(twice)}`,
    )
  }
  return { table, migrationTable, schema }
}

/**
 * The options `owner` takes of `kyselyStore`'s, checked: `known` are all of its option names,
 * and every one of them that `kyselyStore` also takes is checked here, in `owner`'s name.
 */
export function sqlStoreOptions(owner: string, options: object, known: readonly string[]): StoreNames {
  knownOptions(owner, options, known)
  const { batchCreates, destroyOnClose } = options as { batchCreates?: unknown; destroyOnClose?: unknown }
  optionalBoolean(owner, 'batchCreates', batchCreates)
  optionalBoolean(owner, 'destroyOnClose', destroyOnClose)
  return storeNames(owner, options)
}

/**
 * Throws for an option of the store given with the connection (`{ connectionString, schema }`),
 * where the driver ignores it and the store never sees it: the tables went to the default schema.
 */
export function misplacedOptions(owner: string, connection: object, store: readonly string[]): void {
  const name = Object.keys(connection).find((key) => store.includes(key))
  if (name !== undefined) {
    throw new TypeError(
      `${owner}: ${name} is an option of the store, not of the connection: ${owner}(connection, { ${name} })`,
    )
  }
}

/** A name as compared for a misspelling: case, `_` and `-` aside (`connection_string`, `URI`). */
const folded = (name: string) => name.toLowerCase().replace(/[-_]/g, '')

/**
 * A connection's settings, checked alike for each database: no URL under another driver's
 * name (`meant`) or misspelt (`connectionstring`: the driver ignores an unknown setting and
 * connected to the default database, PGHOST's or localhost's), no store option among them, and
 * the URL (`urlName`) a non-empty string of one of `schemes` if given. What was given is told by
 * its kind or scheme only: it may hold a password.
 */
export function connectionSettings(
  owner: string,
  connection: object,
  {
    urlName,
    meant,
    storeOptions,
    schemes,
  }: {
    urlName: string
    meant: Readonly<Record<string, string>>
    storeOptions: readonly string[]
    /** How the URL may begin, e.g. `postgres://`. */
    schemes: readonly string[]
  },
): Record<string, unknown> {
  const misspelt = Object.keys(connection).filter((key) => key !== urlName && folded(key) === folded(urlName))
  misnamedOptions(owner, connection, { ...meant, ...Object.fromEntries(misspelt.map((key) => [key, urlName])) })
  misplacedOptions(owner, connection, storeOptions)
  const config = connection as Record<string, unknown>
  const url = config[urlName]
  if (url === undefined) return config
  if (typeof url !== 'string') throw new TypeError(`${owner}: ${urlName} must be a string, got ${kindOf(url)}`)
  if (!schemes.some((scheme) => url.startsWith(scheme))) {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]
    const given = url === '' ? 'an empty string' : scheme ? `a URL of ${scheme}` : 'a string that is no URL'
    throw new TypeError(`${owner}: ${urlName} must begin with ${schemes.join(' or ')}, got ${given}`)
  }
  return config
}

/** Settings given beside a pool of one's own: they belong on that pool, which the store does not make. */
function nothingBesidePool(owner: string, beside: object): void {
  const other = Object.keys(beside)[0]
  if (other !== undefined) {
    throw new TypeError(
      `${owner}: a connection with a pool takes nothing else, got ${JSON.stringify(other)}: set it on the pool`,
    )
  }
}

/** How a store's connection is checked: as {@link connectionSettings} takes it, and a pool's check. */
export interface ConnectionRules {
  urlName: string
  meant: Readonly<Record<string, string>>
  storeOptions: readonly string[]
  /** How the URL may begin, e.g. `postgres://`; the first is the one examples show. */
  schemes: readonly string[]
  /** Throws unless `pool` is a pool of the store's driver. */
  checkPool(pool: unknown): void
}

/**
 * Throws unless `connection` is a connection of `owner`'s: settings with a URL (see
 * {@link connectionSettings}), given back, or a pool of one's own with nothing beside it
 * (`undefined`). Nothing from it is shown: a URL or a pool's settings may hold a password.
 */
export function connectionOf(
  owner: string,
  connection: unknown,
  rules: ConnectionRules,
): Record<string, unknown> | undefined {
  const { urlName, schemes, checkPool } = rules
  if (typeof connection === 'string') throw new TypeError(`${owner}: pass { ${urlName}: '…' }, not the URL alone`)
  const given = optionsObject(owner, 'the connection', connection, `{ ${urlName}: '${schemes[0]}…' } or { pool }`)
  if (!('pool' in given)) return connectionSettings(owner, given, rules)
  const { pool, ...beside } = given as { pool: unknown }
  checkPool(pool)
  nothingBesidePool(owner, beside)
  return undefined
}

/** Options of `kyselyStore`. */
export interface KyselyStoreOptions {
  /**
   * Table of pets: a name without `.`, of at most 53 bytes of UTF-8 (48 when `migrationTable` is
   * left to its default), so that every name the store makes of it (`<table>_status_id`,
   * `<table>_migration_lock`) fits in the 63 bytes PostgreSQL keeps of a name. Checked on every
   * database alike. @default 'petstore_pets'
   */
  table?: string | undefined
  /**
   * Table where applied migrations are recorded (and `<name>_lock`); one per pets table, never
   * `table` itself. A name without `.`, of at most 58 bytes of UTF-8 (`<name>_lock` fits in 63).
   * @default 'petstore_migration', or `<table>_migration` for a table of another name
   */
  migrationTable?: string | undefined
  /**
   * Schema of both tables (a PostgreSQL schema, a MySQL database), created on first use if
   * missing: a non-empty name of at most 63 bytes of UTF-8. @default the connection's current schema
   */
  schema?: string | undefined
  /** Destroy the kysely instance on `close()`. Leave it off for a database your application owns. @default false */
  destroyOnClose?: boolean | undefined
  /**
   * Group commit: creates that arrive while another is being written go
   * together in the next write, one transaction and one commit (`sqliteStore`,
   * `postgresStore`, `mysqlStore`; a `kyselyStore` over your own instance
   * commits each create on its own). Off, each create commits on its own.
   * @default true
   */
  batchCreates?: boolean | undefined
}
