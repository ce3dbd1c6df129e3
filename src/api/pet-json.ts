/**
 * Pets as JSON text, written field by field from `PET_FIELDS`. A pet's shape
 * is fixed (checked by the schema, or a built-in store's), so this gives the
 * text `JSON.stringify` would, without its generic walk, and with the
 * int64 fields written digit for digit (a bigint beyond 2^53).
 *
 * @module
 */

import type { JsonPage, ListQuery } from '../store/store.js'
import { PET_FIELDS, type PetField } from './pet-fields.js'
import type { Pet } from './schemas.js'

/** What a JSON string must escape: `"`, `\`, control characters, and (to fall back for lone ones) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/** A string as JSON: quoted as it is when nothing in it needs escaping. */
const stringJson = (text: string): string => (NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`)

/** How a field's value is written: escaped text, a word that needs no escaping, or an integer. */
type Format = 'text' | 'word' | 'integer'

/** A field as the writer reads it: its key, the text before its value, and how its value is written. */
interface Column {
  key: string
  prefix: string
  format: Format
}

const COLUMNS: readonly Column[] = PET_FIELDS.map(({ key, kind }) => ({
  key,
  prefix: `,${JSON.stringify(key)}:`,
  format: kind === 'int64' ? 'integer' : kind === 'enum' ? 'word' : 'text',
}))

type Writer = (pet: Record<string, unknown>) => string

/** The writer of pets of `columns`, whatever they are: an absent (optional) field is left out. */
function writerOf(columns: readonly Column[]): Writer {
  return (pet) => {
    let text = `{"id":${pet.id as number}`
    for (const { key, prefix, format } of columns) {
      const value = pet[key]
      if (value === undefined) continue
      // An integer's template text is its JSON text (-0 is "0" in both); an enum's words need no escaping.
      text += prefix + (format === 'text' ? stringJson(value as string) : format === 'word' ? `"${value}"` : `${value}`)
    }
    return `${text}}`
  }
}

/** How `fields` read in a signature: `name:text categoryId:int64 status?:enum`. */
export const signatureOf = (fields: readonly PetField[]): string =>
  fields.map(({ key, kind, optional }) => `${key}${optional ? '?' : ''}:${kind}`).join(' ')

/**
 * The writer tuned for one description of the fields: each read named, each value converted by
 * what its field holds, one template. It writes what the generic writer writes (test/pet-json
 * holds them together), and serves only while `PET_FIELDS` is exactly these fields: a pet with
 * another field is written by the generic writer, never wrongly.
 */
const TUNED: Readonly<Record<string, Writer>> = {
  'name:text categoryId:int64 status?:enum': (pet) => {
    const status = pet.status === undefined ? '' : `,"status":"${pet.status as string}"`
    return `{"id":${pet.id as number},"name":${stringJson(pet.name as string)},"categoryId":${pet.categoryId as number}${status}}`
  },
}

/** The generic writer of the pet's fields, whatever they are. */
export const genericPetJson: Writer = writerOf(COLUMNS)

const writePet = TUNED[signatureOf(PET_FIELDS)] ?? genericPetJson

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
 * `generation` is the store's as the pets were read, where it has one.
 */
export function jsonPageOf(pets: readonly Pet[], limit: number, generation?: number): JsonPage {
  const more = pets.length > limit
  const count = more ? limit : pets.length
  return { json: petsJson(pets, count), lastId: pets[count - 1]?.id, more, generation }
}
