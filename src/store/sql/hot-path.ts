/**
 * Internal to the SQL stores: what every dialect shares. The rows they read,
 * the pages they write as JSON, and the {@link HotPath}: the calls a dialect
 * serves on its statements, whether the store's own driver runs them or a
 * kysely instance does. Not exported by any entry point.
 *
 * @module
 */

import type { NewPet, Pet } from '../../api/schemas.js'
import { petOfValues, petRecord } from '../pet-record.js'
import type { Answer, JsonPage, Store } from '../store.js'
import type { KeyStatements } from './keyed-sql.js'
import { PET_COLUMNS } from './pet-columns.js'
import type { DbSystem } from './query-spans.js'

/** A row of the pets table, by column: int8 arrives as a number, a string (pg, or read as text) or a bigint, by driver. */
export type PetRow = Readonly<Record<string, unknown>> & { id: number | string | bigint }

/** The pet of a row: numbers for ids, int64 fields in their exact form, no key for a NULL optional field. */
export function toPet(row: PetRow): Pet {
  const values = new Array<unknown>(PET_COLUMNS.length + 1)
  values[0] = row.id
  for (let i = 0; i < PET_COLUMNS.length; i++) values[i + 1] = row[PET_COLUMNS[i] as string]
  return petOfValues(values)
}

export { petOfValues }

/** The pet stored under `id` for `input`: what `create` answers without reading the row back. */
export const storedPet = (id: number, input: NewPet): Pet => petRecord(id, input)

/** A page of no pets, read in `generation`. */
const emptyPage = (generation: number | undefined): JsonPage => ({
  json: '[]',
  lastId: undefined,
  more: false,
  generation,
})

/** A page of no pets, for a `limit` below 1 (the SQL of a page assumes at least one). */
export const EMPTY_PAGE: JsonPage = Object.freeze(emptyPage(undefined))

/**
 * A SQL store's calls as a dialect serves them on its statements, once the schema exists: the
 * {@link Store}'s, but `close`, which the store does itself, and `createKeyed`, which it makes of
 * `keys` (see keyed-sql.ts). Calls may answer synchronously (SQLite drivers do) or with a promise.
 */
export type HotPath = Omit<Store, 'close' | 'createKeyed'> & {
  /** The statements on the table of idempotency keys. */
  keys: KeyStatements
  /**
   * Every read answers before it returns (the SQLite drivers): the store then offers its reads
   * at once to the handler.
   */
  synchronous?: true
  /**
   * Inserts `pets` atomically, in one transaction under the commit-order lock,
   * and gives their ids in the order of `pets`. Where a store has it,
   * `kyselyStore` sends creates through group commit (see group-commit.ts).
   */
  insertMany?(pets: readonly NewPet[]): readonly number[] | Promise<readonly number[]>
  /** How many of `ready` creates one `insertMany` takes, where a store limits that. @default all, up to 256 */
  batchOf?(ready: number): number
}

/** Where the hot path's statements go: the table, in `schema` when there is one. */
export interface HotPathTarget {
  table: string
  schema: string | undefined
  /** The server as query spans name it, where the store has asked (MySQL or MariaDB). */
  system?: DbSystem
}

/** How every pet of a page as JSON begins; see {@link withoutLastPet} for why it marks pets and nothing else. */
const PET_START = '{"id":'

/**
 * The page of `json` (an array of pets as the database writes them) without its
 * last pet, which tells that more follow, and the id of the pet that is last then.
 * Each element begins with `{"id":`, and that text cannot occur inside a JSON
 * string, where every `"` is escaped: so the last `,{"id":` is where the last pet begins.
 */
function withoutLastPet(json: string, generation: number): JsonPage {
  const cut = json.lastIndexOf(`,${PET_START}`)
  const start = json.lastIndexOf(PET_START, cut) + PET_START.length
  // One literal, of one shape with every other page: a spread made a new shape per page, which kept
  // young objects alive under load. test/request-shape.test.ts holds it.
  return {
    json: `${json.slice(0, cut)}]`,
    lastId: Number(json.slice(start, json.indexOf(',', start))),
    more: true,
    generation,
  }
}

/**
 * The row of a statement that aggregates `limit + 1` pets as JSON text, and reads the
 * generation of the pets table (see `generationTable`) in the same statement: no round trip more.
 */
export interface JsonPageRow {
  json: string
  count: number | string | bigint
  last_id: number | string | bigint | null
  generation: number | string | bigint
}

/**
 * The page of at most `limit` pets from a row aggregating up to `limit + 1`:
 * one more than the page tells that more follow, and is cut off the text.
 * (Aggregating only the first `limit` in SQL takes a window function or a
 * second pass over the index; both cost more than the page itself.)
 */
export function pageOfJson(row: JsonPageRow | undefined, limit: number): JsonPage {
  return row === undefined ? EMPTY_PAGE : pageOf(row.json, row.count, row.last_id, row.generation, limit)
}

/** A {@link JsonPageRow} read as its values (see `ValuesStatement`): `json`, `count`, `last_id`, `generation`. */
export type JsonPageValues = readonly [
  json: string,
  count: JsonPageRow['count'],
  last_id: JsonPageRow['last_id'],
  generation: JsonPageRow['generation'],
]

/** The page of a row read as values, as {@link pageOfJson}. */
export function pageOfJsonValues(values: JsonPageValues | undefined, limit: number): JsonPage {
  return values === undefined ? EMPTY_PAGE : pageOf(values[0], values[1], values[2], values[3], limit)
}

function pageOf(
  json: string,
  count: JsonPageRow['count'],
  lastId: JsonPageRow['last_id'],
  read: JsonPageRow['generation'],
  limit: number,
): JsonPage {
  const generation = Number(read)
  if (lastId === null) return emptyPage(generation)
  if (Number(count) > limit) return withoutLastPet(json, generation)
  return { json, lastId: Number(lastId), more: false, generation }
}

/** Called by the SQL store once the migrations are done, to prepare its statements on its own driver. */
export type OpenHotPath = (target: HotPathTarget) => Answer<HotPath>

/**
 * The name of the insert lock on `target`'s table. PostgreSQL and MySQL hand out
 * ids before commit, so concurrent writers can commit id 34 before 33; a client
 * paging by id could pass 33 before it exists and never see it. A lock held from
 * the id's allocation to the commit keeps commit order equal to id order, across
 * processes too (SQLite writes one transaction at a time already). Every process
 * on a table must agree on this name, whichever version of the store it runs.
 */
export const insertLockName = ({ table, schema }: HotPathTarget): string => `petstore:${schema ?? ''}.${table}`

/** MySQL's named locks belong to the server, not a database: the key holds the connection's database too. */
const MYSQL_LOCK_KEY = "sha1(concat(coalesce(database(), ''), '/', ?))"

/** Takes and lets go of MySQL's insert lock (see {@link insertLockName}), the name as the one parameter. */
export const MYSQL_LOCK = {
  take: `select get_lock(${MYSQL_LOCK_KEY}, 10) as got`,
  release: `select release_lock(${MYSQL_LOCK_KEY})`,
}

/** `then` of `value`: at once when it is no promise (a SQLite driver's answer), else once it resolves. */
export function thenAt<T, R>(value: Answer<T>, then: (value: T) => R): Answer<R> {
  return value instanceof Promise ? value.then(then) : then(value)
}

/** `name` quoted as an SQL identifier (SQLite and PostgreSQL quote alike). */
export const quoteName = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** `"schema"."table"` (or `"table"`), each part quoted as an SQL identifier. */
export function qualifiedTable({ table, schema }: HotPathTarget): string {
  return schema === undefined ? quoteName(table) : `${quoteName(schema)}.${quoteName(table)}`
}

/** What the errors of one dialect's driver say, read from their codes. */
export interface DialectErrors {
  /** The code of an error its driver reports otherwise than as a string `code`, if it does. */
  code?(error: { code?: unknown; errcode?: unknown }): string | undefined
  /** Whether `code` says the database is not there right now (not that this request is wrong). */
  unavailable(code: string): boolean
  /** Whether the driver lost its connection, as the error says besides its code. */
  lost?(error: { message?: unknown; fatal?: unknown }, code: string | undefined): boolean
  /** Whether `code` is what processes migrating one database at the same moment collide on. */
  race(code: string): boolean
  /**
   * Whether `code` is a lock conflict that the database settled by rolling the statement's
   * transaction back (a deadlock, a lock wait timed out): nothing of it is stored, so it may be
   * tried again.
   */
  busy?(code: string): boolean
}

/** Tries of {@link triedAgain}, and the first pause before one again: about 10, 20, 40 ms, with jitter. */
const TRIES = 4
const PAUSE_MS = 10

/**
 * `work`, tried again while it fails as `again` says (a lock conflict the database rolled back),
 * up to 4 times in all, each after a short random pause that lets the other transaction finish.
 * Its last failure is thrown as it is: `mapped` (database-errors.ts) makes it a 503 with `Retry-After`.
 *
 * @example
 * ```ts
 * const result = await triedAgain(() => run(insert, values), (error) => MYSQL_ERRORS.busy?.(codeOf(error)) === true)
 * ```
 */
export async function triedAgain<T>(work: () => Promise<T>, again: (error: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= TRIES || !again(error)) throw error
      const pause = PAUSE_MS * 2 ** (attempt - 1)
      await new Promise((resolve) => setTimeout(resolve, pause / 2 + Math.random() * pause))
    }
  }
}
