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

type Writer = (pet: Record<string, unknown>) => string

/**
 * The writer of one field: `,"key":value`, or nothing for an absent optional field. Each kind
 * and optionality has a function of its own, so that each reads its one key the same way at
 * every call. Made once, when this module loads.
 */
function writerOf({ key, kind, optional }: PetField): Writer {
  const prefix = `,${JSON.stringify(key)}:`
  // Numbers are safe integers or bigints: their template text is their JSON text (and -0 is "0" in both).
  // An enum's words need no escaping: the schema allows no other.
  if (optional) {
    if (kind === 'enum') {
      return (pet) => {
        const value = pet[key]
        return value === undefined ? '' : `${prefix}"${value as string}"`
      }
    }
    if (kind === 'int64') {
      return (pet) => {
        const value = pet[key]
        return value === undefined ? '' : `${prefix}${value as number}`
      }
    }
    return (pet) => {
      const value = pet[key]
      return value === undefined ? '' : prefix + stringJson(value as string)
    }
  }
  if (kind === 'int64') return (pet) => `${prefix}${pet[key] as number}`
  if (kind === 'enum') return (pet) => `${prefix}"${pet[key] as string}"`
  return (pet) => prefix + stringJson(pet[key] as string)
}

const WRITERS: readonly Writer[] = PET_FIELDS.map(writerOf)

/**
 * One pet, fields in the schema's order; an optional field only when set.
 *
 * @example
 * ```ts
 * petJson({ id: 1, name: 'Rex', …rest }) // → '{"id":1,"name":"Rex",…}'
 * ```
 */
export function petJson(pet: Pet): string {
  let text = `{"id":${pet.id}`
  for (let i = 0; i < WRITERS.length; i++) text += (WRITERS[i] as Writer)(pet as unknown as Record<string, unknown>)
  return `${text}}`
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
