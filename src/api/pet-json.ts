/**
 * Pets as JSON text, written field by field from `PET_FIELDS`. A pet's shape
 * is fixed (checked by the schema, or a built-in store's), so this gives the
 * text `JSON.stringify` would, without its generic walk, and with the
 * int64 fields written digit for digit (a bigint beyond 2^53).
 *
 * @module
 */

import type { JsonPage, ListQuery } from '../store/store.js'
import { PET_FIELDS } from './pet-fields.js'
import type { Pet } from './schemas.js'

/** What a JSON string must escape: `"`, `\`, control characters, and (to fall back for lone ones) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/** A string as JSON: quoted as it is when nothing in it needs escaping. */
const stringJson = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`)

/** How a field is written: escaped text, a word that needs no escaping, or an integer. */
const TEXT = 0
const WORD = 1
const INTEGER = 2

/** A field as the writer reads it: its key, the text before its value, and how its value is written. */
interface Column {
  key: string
  prefix: string
  format: number
}

/** A field's value as JSON, or nothing for an absent (optional) field. */
function valueJson(format: number, value: unknown): string | number | bigint {
  if (value === undefined) return ''
  // Numbers are safe integers or bigints: their template text is their JSON text (and -0 is "0" in both).
  if (format === INTEGER) return value as number
  // A word of an enum needs no escaping: the schema allows no other.
  if (format === WORD) return `"${value as string}"`
  return stringJson(value as string)
}

/** The text before a field's value: `,"key":`, or nothing for an absent field. */
const before = (column: Column, value: unknown): string => (value === undefined ? '' : column.prefix)

const COLUMNS: readonly Column[] = PET_FIELDS.map(({ key, kind }) => ({
  key,
  prefix: `,${JSON.stringify(key)}:`,
  format: kind === 'int64' ? INTEGER : kind === 'enum' ? WORD : TEXT,
}))

type Writer = (pet: Record<string, unknown>) => string

/**
 * One pet's writer, made once from the columns: for up to four fields, one template with a read,
 * a prefix and a value of its own for each field, which the engine compiles as one concatenation;
 * past four, a loop.
 */
function writerOf(columns: readonly Column[]): Writer {
  const [a, b, c, d] = columns as [Column, Column, Column, Column]
  switch (columns.length) {
    case 1:
      return (pet) => {
        const va = pet[a.key]
        return `{"id":${pet.id as number}${before(a, va)}${valueJson(a.format, va)}}`
      }
    case 2:
      return (pet) => {
        const [va, vb] = [pet[a.key], pet[b.key]]
        return `{"id":${pet.id as number}${before(a, va)}${valueJson(a.format, va)}${before(b, vb)}${valueJson(b.format, vb)}}`
      }
    case 3:
      return (pet) => {
        const va = pet[a.key]
        const vb = pet[b.key]
        const vc = pet[c.key]
        return `{"id":${pet.id as number}${before(a, va)}${valueJson(a.format, va)}${before(b, vb)}${valueJson(b.format, vb)}${before(c, vc)}${valueJson(c.format, vc)}}`
      }
    case 4:
      return (pet) => {
        const va = pet[a.key]
        const vb = pet[b.key]
        const vc = pet[c.key]
        const vd = pet[d.key]
        return `{"id":${pet.id as number}${before(a, va)}${valueJson(a.format, va)}${before(b, vb)}${valueJson(b.format, vb)}${before(c, vc)}${valueJson(c.format, vc)}${before(d, vd)}${valueJson(d.format, vd)}}`
      }
    default:
      return (pet) => {
        let text = `{"id":${pet.id as number}`
        for (const column of columns) {
          const value = pet[column.key]
          text += `${before(column, value)}${valueJson(column.format, value)}`
        }
        return `${text}}`
      }
  }
}

const writePet = writerOf(COLUMNS)

/**
 * One pet, fields in the schema's order; an optional field only when set.
 *
 * @example
 * ```ts
 * petJson({ id: 1, name: 'Rex', …rest }) // → '{"id":1,"name":"Rex",…}'
 * ```
 */
export function petJson(pet: Pet): string {
  return writePet(pet as unknown as Record<string, unknown>)
}

/** The first `count` pets (all by default) as a JSON array. */
export function petsJson(pets: readonly Pet[], count = pets.length): string {
  let text = '['
  for (let i = 0; i < count; i++) text += i === 0 ? petJson(pets[i] as Pet) : `,${petJson(pets[i] as Pet)}`
  return `${text}]`
}

/** The query for one pet more than the page `query`: read, it feeds {@link jsonPageOf}. */
export function oneMore({ status, limit, after }: ListQuery): ListQuery {
  return { status, limit: limit + 1, after }
}

/**
 * The page of at most `limit` pets, as JSON, from up to `limit + 1` pets
 * read: one more than the page tells that more follow, without a count.
 */
export function jsonPageOf(pets: readonly Pet[], limit: number): JsonPage {
  const more = pets.length > limit
  const count = more ? limit : pets.length
  return { json: petsJson(pets, count), lastId: pets[count - 1]?.id, more }
}
