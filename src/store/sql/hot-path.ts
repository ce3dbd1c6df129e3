/**
 * Internal to the SQL stores: the rows they read, and the hook through which
 * the SQLite and PostgreSQL stores serve requests on statements of their own
 * instead of kysely's query builder. Not exported by any entry point.
 *
 * @module
 */

import { int64Of, type NewPet, type Pet, type PetStatus } from '../../api/schemas.js'
import { petRecord } from '../pet-record.js'
import type { JsonPage, ListQuery } from '../store.js'
import type { SqlFamily } from './migrations.js'
import type { DbSystem } from './query-spans.js'

/** A row of the pets table: int8 arrives as a number, a string (pg, or read as text) or a bigint, by driver. */
export interface PetRow {
  id: number | string | bigint
  name: string
  category_id: number | string | bigint
  status: string | null
}

/**
 * The columns of a pet, `category_id` as decimal text: every driver reads text exactly, while
 * an int8 beyond 2^53 read as a number would be rounded (better-sqlite3, bun:sqlite, a pg or
 * mysql2 pool set up to give numbers) or refused (node:sqlite).
 */
export function petColumns(family: SqlFamily): string {
  return `id, name, ${categoryIdText(family)} as category_id, status`
}

/** `category_id` as decimal text, in the SQL of `family` (MySQL casts to `char`, not `text`). */
export function categoryIdText(family: SqlFamily): string {
  return `cast(category_id as ${family === 'mysql' ? 'char' : 'text'})`
}

/** The pet of a row: numbers for ids, an {@link Int64} categoryId, no `status` key for a NULL status. */
export function toPet(row: PetRow): Pet {
  return petOf(row.id, row.name, row.category_id, row.status)
}

/** A {@link PetRow} read as its values (see `ValuesStatement`), in the order of {@link petColumns}. */
export type PetValues = readonly [
  id: PetRow['id'],
  name: string,
  category_id: PetRow['category_id'],
  status: string | null,
]

/** The pet of a row read as values, as {@link toPet}. */
export function petOfValues(values: PetValues): Pet {
  return petOf(values[0], values[1], values[2], values[3])
}

function petOf(id: PetRow['id'], name: string, categoryId: PetRow['category_id'], status: string | null): Pet {
  return petRecord(Number(id), name, int64Of(categoryId), status === null ? undefined : (status as PetStatus))
}

/** The pet stored under `id` for `input`: what `create` answers without reading the row back. */
export function storedPet(id: number, input: NewPet): Pet {
  return petRecord(id, input.name, input.categoryId, input.status)
}

/** A page of no pets, for a `limit` below 1 (the SQL of a page assumes at least one). */
export const EMPTY_PAGE: JsonPage = Object.freeze({ json: '[]', lastId: undefined, more: false })

/**
 * What a SQL store serves on statements of its own once its schema exists.
 * Methods may answer synchronously (SQLite drivers do) or with a promise.
 */
export interface HotPath {
  /**
   * Every read answers before it returns (the SQLite drivers): the store then offers its reads
   * at once to the handler.
   */
  synchronous?: true
  get(id: number): Pet | undefined | Promise<Pet | undefined>
  list(query: ListQuery): Pet[] | Promise<Pet[]>
  listJson(query: ListQuery): JsonPage | Promise<JsonPage>
  create(pet: NewPet): Pet | Promise<Pet>
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
function withoutLastPet(json: string): JsonPage {
  const cut = json.lastIndexOf(`,${PET_START}`)
  const start = json.lastIndexOf(PET_START, cut) + PET_START.length
  // One literal: built as `{ ...{ json, lastId }, more: true }`, once optimized, Node 20's V8 gave
  // each page a hidden class of its own, and under load ~100 KB of young objects went to old space
  // per scavenge (the yardstick: 1 KB), each scavenge three times as long (--trace-gc-nvp).
  // test/request-shape.test.ts holds it.
  return { json: `${json.slice(0, cut)}]`, lastId: Number(json.slice(start, json.indexOf(',', start))), more: true }
}

/** The row of a statement that aggregates `limit + 1` pets as JSON text. */
export interface JsonPageRow {
  json: string
  count: number | string | bigint
  last_id: number | string | bigint | null
}

/**
 * The page of at most `limit` pets from a row aggregating up to `limit + 1`:
 * one more than the page tells that more follow, and is cut off the text.
 * (Aggregating only the first `limit` in SQL takes a window function or a
 * second pass over the index; both cost more than the page itself.)
 */
export function pageOfJson(row: JsonPageRow | undefined, limit: number): JsonPage {
  return row === undefined ? EMPTY_PAGE : pageOf(row.json, row.count, row.last_id, limit)
}

/** A {@link JsonPageRow} read as its values (see `ValuesStatement`): `json`, `count`, `last_id`. */
export type JsonPageValues = readonly [json: string, count: JsonPageRow['count'], last_id: JsonPageRow['last_id']]

/** The page of a row read as values, as {@link pageOfJson}. */
export function pageOfJsonValues(values: JsonPageValues | undefined, limit: number): JsonPage {
  return values === undefined ? EMPTY_PAGE : pageOf(values[0], values[1], values[2], limit)
}

function pageOf(json: string, count: JsonPageRow['count'], lastId: JsonPageRow['last_id'], limit: number): JsonPage {
  if (lastId === null) return EMPTY_PAGE
  if (Number(count) > limit) return withoutLastPet(json)
  return { json, lastId: Number(lastId), more: false }
}

/** Called by `kyselyStore` once the migrations are done, to prepare the statements of the hot path. */
export type OpenHotPath = (target: HotPathTarget) => HotPath | Promise<HotPath>

/** `name` quoted as an SQL identifier (SQLite and PostgreSQL quote alike). */
export const quoteName = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** `"schema"."table"` (or `"table"`), each part quoted as an SQL identifier. */
export function qualifiedTable({ table, schema }: HotPathTarget): string {
  return schema === undefined ? quoteName(table) : `${quoteName(schema)}.${quoteName(table)}`
}
