/**
 * The hand-written pet serializer (src/api/pet-json.ts) must write exactly what
 * `JSON.stringify` writes for every pet the schema accepts: any name (quotes,
 * backslashes, control characters, U+2028, emoji, lone surrogates), ids and
 * categoryIds over the whole safe range, with and without `status`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import * as v from 'valibot'
import { PET_FIELDS } from '../src/api/pet-fields.js'
import { genericPetJson, petJson, petsJson, signatureOf } from '../src/api/pet-json.js'
import { int64Of, type Pet, PetSchema } from '../src/api/schemas.js'

const MAX = Number.MAX_SAFE_INTEGER

const name = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.constantFrom(
    '"',
    '\\',
    '\u0000',
    '\n\t\r\b\f',
    '\u001f',
    '\u007f',
    '\u2028\u2029',
    '\ud800',
    'a\udfffb',
    '😀',
    '</script>',
  ),
)
/** A pet as the schema gives it: fields in the schema's order, `status` absent or set. */
const pet: fc.Arbitrary<Pet> = fc
  .record({
    id: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(MAX, 2 ** 32 + 1)),
    name,
    categoryId: fc.oneof(fc.integer(), fc.constantFrom(-MAX, MAX, 0, -0)),
    status: fc.option(fc.constantFrom('available', 'pending', 'sold') as fc.Arbitrary<Pet['status']>, {
      nil: undefined,
    }),
  })
  .map(({ status, ...rest }) => (status === undefined ? rest : { ...rest, status }))

describe('pet JSON', () => {
  it('the generic writer, which a pet with other fields gets, writes the same', () => {
    fc.assert(
      fc.property(pet, (p) => {
        assert.equal(genericPetJson(p), JSON.stringify(p))
      }),
    )
  })

  it('the tuned writer serves the fields it was written for, and no others', () => {
    assert.equal(signatureOf(PET_FIELDS), 'name:text categoryId:int64 status?:enum')
    fc.assert(
      fc.property(pet, (p) => {
        assert.equal(petJson(p), genericPetJson(p))
      }),
    )
  })

  it('petJson writes what JSON.stringify writes, for any pet', () => {
    fc.assert(
      fc.property(pet, (p) => {
        assert.equal(petJson(p), JSON.stringify(p))
      }),
      { numRuns: 5_000, seed: 20261123 },
    )
  })

  it('petsJson writes what JSON.stringify writes, for any page (empty included)', () => {
    fc.assert(
      fc.property(fc.array(pet, { maxLength: 30 }), (pets) => {
        assert.equal(petsJson(pets), JSON.stringify(pets))
      }),
      { numRuns: 1_000, seed: 20261123 },
    )
  })

  it('petJson writes an int64 categoryId digit for digit: the ends, 2^53 ± 1, and any other', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(int64Of)
    const edges = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n]
    fc.assert(
      fc.property(pet, int64, (p, categoryId) => {
        // JSON.stringify refuses bigints: what it writes for 0, with the digits in its place.
        const expected = JSON.stringify({ ...p, categoryId: 0 }).replace('"categoryId":0', `"categoryId":${categoryId}`)
        assert.equal(petJson({ ...p, categoryId }), expected)
        assert.equal(petsJson([{ ...p, categoryId }]), `[${expected}]`)
      }),
      { numRuns: 2_000, seed: 20261123, examples: edges.map((edge) => [{ id: 1, name: 'Rex' }, int64Of(edge)]) },
    )
  })

  it('a pet validated by the schema comes out with its fields in the schema order', () => {
    const parsed = v.parse(PetSchema, { status: 'sold', categoryId: 2, name: 'Rex', id: 1 })
    assert.equal(petJson(parsed), '{"id":1,"name":"Rex","categoryId":2,"status":"sold"}')
  })
})
