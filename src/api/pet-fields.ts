/**
 * The pet's fields, described once, from the body schema of `POST /pets`:
 * what every store, every SQL dialect and the JSON writer need to know of a
 * field. A new field of the pet is a new entry of `NewPetSchema` (and a
 * migration per dialect); everything else follows from this list.
 *
 * @module
 */
import type * as v from 'valibot'
import { Int64Schema, type NewPet, NewPetSchema } from './schemas.js'

/**
 * How a field's value is held:
 * - `text`: a string, written to JSON escaped;
 * - `enum`: one of a few fixed words that need no escaping (a picklist);
 * - `int64`: an {@link Int64}, stored as SQL `bigint` and read back as decimal text, so that
 *   values beyond 2^53 stay exact on every driver.
 */
export type PetFieldKind = 'text' | 'enum' | 'int64'

/** The SQL dialects the stores speak. */
export type SqlDialect = 'sqlite' | 'postgres' | 'mysql'

/** One field of the pet, after its `id`. */
export interface PetField {
  /** The property of the pet, and its JSON key. */
  readonly key: keyof NewPet & string
  /** The column of the pets table. */
  readonly column: string
  readonly kind: PetFieldKind
  /** Absent from a pet when not given: the column is nullable, and JSON has no key for it. */
  readonly optional: boolean
  /** The column's type in each dialect, as the migrations declared it. */
  readonly sqlType: Readonly<Record<SqlDialect, string>>
}

type Entry = v.GenericSchema & { type: string; wrapped?: Entry; pipe?: readonly unknown[] }

/** The schema a field's entry checks with, its `optional` wrapper and `pipe` looked through. */
function baseOf(entry: Entry): { base: Entry; optional: boolean } {
  const optional = entry.type === 'optional'
  const inner = optional ? (entry.wrapped as Entry) : entry
  return { base: inner, optional }
}

function kindOf(key: string, base: Entry): PetFieldKind {
  if (base === (Int64Schema as unknown)) return 'int64'
  const first = (base.pipe?.[0] as Entry | undefined) ?? base
  if (first.type === 'picklist') return 'enum'
  if (first.type === 'string') return 'text'
  throw new TypeError(`pet field ${key}: no storage is known for a ${first.type} schema`)
}

/** `bornOn` → `born_on`. */
const snakeCase = (key: string): string => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** The SQL type of each kind, per dialect: what a migration that adds such a field declares. */
const SQL_TYPES: Record<PetFieldKind, Record<SqlDialect, string>> = {
  // MySQL indexes no `text`; 255 code points is what a name may hold, in utf8mb4.
  text: { sqlite: 'text', postgres: 'text', mysql: 'varchar(255)' },
  enum: { sqlite: 'varchar(16)', postgres: 'varchar(16)', mysql: 'varchar(16)' },
  int64: { sqlite: 'bigint', postgres: 'bigint', mysql: 'bigint' },
}

/**
 * The pet's fields after `id`, in the schema's order, which is the order of
 * their JSON keys and of their columns in every statement.
 *
 * @example
 * ```ts
 * PET_FIELDS.map((field) => field.column) // → ['name', …]
 * ```
 */
export const PET_FIELDS: readonly PetField[] = Object.entries(NewPetSchema.entries).map(([key, entry]) => {
  const { base, optional } = baseOf(entry as Entry)
  const kind = kindOf(key, base)
  return Object.freeze({
    key: key as keyof NewPet & string,
    column: snakeCase(key),
    kind,
    optional,
    sqlType: SQL_TYPES[kind],
  })
})

/** The keys of the fields whose values are int64: JSON bodies read them digit for digit. */
export const INT64_KEYS: readonly string[] = PET_FIELDS.filter((field) => field.kind === 'int64').map(
  (field) => field.key,
)

/** The keys a new pet must have. */
export const REQUIRED_KEYS: readonly string[] = PET_FIELDS.filter((field) => !field.optional).map((field) => field.key)

const shapeOf = (keys: readonly string[]) => `{ ${keys.join(', ')} }`
const shownKeys = PET_FIELDS.map((field) => (field.optional ? `${field.key}?` : field.key))

/** A new pet as messages show it: `{ name, …, status? }`. */
export const PET_SHAPE = shapeOf(shownKeys)

/** A pet of a seed as messages show it: a new pet, and the id it may keep. */
export const SEED_PET_SHAPE = shapeOf([...shownKeys, 'id?'])

/**
 * `target[key] = value` for the field at `index` of `PET_FIELDS`: each of the first fields is
 * written at a place of its own in this code, so that each place always writes the same key and
 * the engine makes it as quick as a named write. Records, inputs and rows go through here.
 */
export function setField(target: Record<string, unknown>, index: number, key: string, value: unknown): void {
  switch (index) {
    case 0:
      target[key] = value
      break
    case 1:
      target[key] = value
      break
    case 2:
      target[key] = value
      break
    case 3:
      target[key] = value
      break
    default:
      target[key] = value
  }
}

/** `source[key]` for the field at `index` of `PET_FIELDS`: see {@link setField}. */
export function getField(source: Readonly<Record<string, unknown>>, index: number, key: string): unknown {
  switch (index) {
    case 0:
      return source[key]
    case 1:
      return source[key]
    case 2:
      return source[key]
    case 3:
      return source[key]
    default:
      return source[key]
  }
}
