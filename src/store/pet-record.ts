/**
 * Pets as the stores build them: plain objects (their prototype is
 * `Object.prototype`), `id` first and then the fields of `PET_FIELDS` in
 * their order, an optional field absent when it has no value. One
 * constructor builds them all, so that every stored pet shares a few object
 * shapes of its own, sized for its fields, rather than the shapes of request
 * bodies or of literals elsewhere.
 *
 * @module
 */
import { getField, PET_FIELDS, setField } from '../api/pet-fields.js'
import { int64Of, type NewPet, type Pet } from '../api/schemas.js'

const FIELDS = PET_FIELDS

/** `values` holds the fields in order from `offset`; a row's int64 values arrive as text or bigint. */
const PetRecord = function (
  this: Record<string, unknown>,
  id: number,
  values: ArrayLike<unknown>,
  offset: number,
  fromRow: boolean,
) {
  this.id = id
  for (let i = 0; i < FIELDS.length; i++) {
    const { key, kind, optional } = FIELDS[i] as (typeof FIELDS)[number]
    let value = values[i + offset]
    if (value === undefined || value === null) {
      if (optional) continue
    } else if (fromRow && kind === 'int64') {
      value = int64Of(value as number | bigint | string)
    }
    setField(this, i, key, value)
  }
} as unknown as new (
  id: number,
  values: ArrayLike<unknown>,
  offset: number,
  fromRow: boolean,
) => Pet
PetRecord.prototype = Object.prototype

/** The values of `pet`'s fields, in the order of `PET_FIELDS`; `undefined` for an absent one. */
export function fieldValues(pet: NewPet): unknown[] {
  const values = new Array<unknown>(FIELDS.length)
  for (let i = 0; i < FIELDS.length; i++) values[i] = getField(pet, i, (FIELDS[i] as (typeof FIELDS)[number]).key)
  return values
}

/**
 * The pet `input` stored under `id`: its fields only, no key for an absent optional one.
 *
 * @example
 * ```ts
 * petRecord(1, { name: 'Rex', …, status: undefined }) // → { id: 1, name: 'Rex', … }: no status key
 * ```
 */
export function petRecord(id: number, input: NewPet): Pet {
  return new PetRecord(id, fieldValues(input), 0, false)
}

/**
 * The pet of a row read as values: the id, then the columns in the order of `PET_FIELDS`. A NULL
 * is an absent field; an int64 column arrives as a number, a bigint or decimal text, by driver.
 */
export function petOfValues(values: ArrayLike<unknown>): Pet {
  return new PetRecord(Number(values[0]), values, 1, true)
}
