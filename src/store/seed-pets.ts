/**
 * A seed as pets with their ids: checked against the API's own schema, the
 * ids given kept, the others handed out in order after the highest, as
 * `memoryStore({ pets })` does. Every store loads the same list.
 *
 * @module
 */
import * as v from 'valibot'
import { SEED_PET_SHAPE } from '../api/pet-fields.js'
import { type Pet, SeedPetSchema } from '../api/schemas.js'
import { petRecord } from './pet-record.js'

/**
 * The highest id a seed may give or hand out: 2^52 − 1, so that 2^52 creates still fit under
 * 2^53, the last id every store and JSON client represents exactly. A seed near 2^53 left no
 * room, and the stores then gave one id twice or one they could not represent.
 */
export const MAX_SEEDED_ID = 2 ** 52 - 1

/** Why a seed whose ids (`undefined`: handed out) go past {@link MAX_SEEDED_ID} is refused, naming the entry. */
export function noRoom(ids: ReadonlyArray<number | undefined>): string {
  const why = `past ${MAX_SEEDED_ID} (2^52 - 1): a seed must leave room for the ids of new pets`
  const over = ids.findIndex((id) => id !== undefined && id > MAX_SEEDED_ID)
  if (over >= 0) return `pets[${over}].id: ${ids[over]} is ${why}`
  return `pets[${ids.lastIndexOf(undefined)}]: its id would be ${why}`
}

/** What a seed gives: the pets, ascending by id. */
export type SeedRecords = readonly Pet[]

/**
 * `pets` as records, or a `TypeError` naming the entry and the field: `pets[2].name: must be a
 * string`. A pet without an id gets the next one after the highest given so far.
 *
 * @example
 * ```ts
 * seedRecords([{ id: 5, ...rex }, tom]) // → [{ id: 5, ...rex }, { id: 6, ...tom }]
 * ```
 */
export function seedRecords(pets: unknown): SeedRecords {
  if (!Array.isArray(pets)) throw new TypeError(`pets must be a JSON array of pets, ${SEED_PET_SHAPE}`)
  const given: Array<{ id?: number | undefined; pet: Pet }> = pets.map((entry: unknown, index) => {
    const result = v.safeParse(SeedPetSchema, entry, { abortPipeEarly: true })
    if (!result.success) {
      const issue = result.issues[0]
      // A missing key is reported by its object (see validate.ts): say what is wrong with the key.
      const message = issue.kind === 'schema' && issue.received === 'undefined' ? 'is required' : issue.message
      const path = v.getDotPath(issue)
      throw new TypeError(`pets[${index}]${path === null ? '' : `.${path}`}: ${message}`)
    }
    const { id, ...pet } = result.output
    return { id, pet: petRecord(id ?? 0, pet) }
  })
  const taken = new Map<number, number>()
  for (const [index, { id }] of given.entries()) {
    if (id === undefined) continue
    const first = taken.get(id)
    if (first !== undefined) throw new TypeError(`pets[${index}].id: ${id} is the id of pets[${first}] too`)
    taken.set(id, index)
  }
  const records = given.filter(({ id }) => id !== undefined).map(({ pet }) => pet)
  records.sort((a, b) => a.id - b.id)
  let lastId = records.at(-1)?.id ?? 0
  for (const { id, pet } of given) if (id === undefined) records.push(petRecord(++lastId, pet))
  if (lastId > MAX_SEEDED_ID) throw new TypeError(noRoom(given.map(({ id }) => id)))
  return records
}
