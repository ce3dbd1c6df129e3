/**
 * The pets a store gives must be, to any reader, the object literal
 * `{ id, name, categoryId, status }`, while keeping a hidden class of their
 * own: one shared with literals lets other objects of the same keys (the
 * schemas' entries, parsed bodies) mark their number fields as "any value",
 * and the pet JSON writer takes the generic path for them. Read through the
 * memory store's public calls.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inspect } from 'node:util'
import v8 from 'node:v8'
import fc from 'fast-check'
import type { PetStatus } from '../src/api/schemas.js'
import { memoryStore } from '../src/index.js'
import { MAX_SEEDED_ID } from '../src/store/seed-pets.js'

v8.setFlagsFromString('--allow-natives-syntax')
/** V8's own answer to "do these objects share a hidden class?" (parsed after the flag is set). */
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

const fields = fc.record({
  // The ids a seed may give (see seed-pets.ts).
  id: fc.integer({ min: 1, max: MAX_SEEDED_ID }),
  // Names the API takes (and a store holds): not only whitespace.
  name: fc.string({ minLength: 1, maxLength: 20 }).filter((name) => name.trim() !== ''),
  categoryId: fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  status: fc.option(fc.constantFrom<PetStatus>('available', 'pending', 'sold'), { nil: undefined }),
})

/** The pet `memoryStore` gives back for these fields, seeded under `id`. */
async function storedPet(id: number, name: string, categoryId: number | bigint, status?: PetStatus) {
  const store = memoryStore({
    pets: [status === undefined ? { id, name, categoryId } : { id, name, categoryId, status }],
  })
  const pet = await store.get(id)
  assert.ok(pet !== undefined)
  return pet
}

describe('pet records', () => {
  it('read as the object literal: same prototype, keys in order, values, text', async () => {
    await fc.assert(
      fc.asyncProperty(fields, async ({ id, name, categoryId, status }) => {
        const pet = await storedPet(id, name, categoryId, status)
        // A categoryId within the safe range comes back as a number, as every store gives it.
        const exact =
          typeof categoryId === 'bigint' && Number.isSafeInteger(Number(categoryId)) ? Number(categoryId) : categoryId
        const literal = status === undefined ? { id, name, categoryId: exact } : { id, name, categoryId: exact, status }
        assert.deepStrictEqual(pet, literal)
        assert.equal(Object.getPrototypeOf(pet), Object.prototype)
        assert.equal(pet.constructor, Object)
        assert.deepEqual(Object.keys(pet), Object.keys(literal))
        assert.equal('status' in pet, status !== undefined)
        assert.equal(inspect(pet), inspect(literal))
      }),
    )
  })

  it('have a hidden class of their own, not the one literals of the same keys share', async () => {
    // The store's pets are frozen: they are held against literals frozen too.
    const literal = (id: number) => Object.freeze({ id, name: 'Rex', categoryId: 2, status: 'sold' as const })
    assert.ok(haveSameMap(literal(1), literal(2)), 'the probe sees two literals share a class')
    assert.ok(!haveSameMap(await storedPet(1, 'Rex', 2, 'sold'), literal(1)))
    assert.ok(!haveSameMap(await storedPet(1, 'Rex', 2), Object.freeze({ id: 1, name: 'Rex', categoryId: 2 })))
    assert.ok(haveSameMap(await storedPet(1, 'Rex', 2, 'sold'), await storedPet(3, 'Tom', 4, 'pending')))
  })

  it('are what the memory store holds, created or seeded', async () => {
    const store = memoryStore({ pets: [{ name: 'Rex', categoryId: 1, status: 'available' }] })
    const created = await store.create({ name: 'Tom', categoryId: 2 })
    const [first] = await store.list({ limit: 1 })
    assert.ok(first !== undefined)
    assert.ok(haveSameMap(await storedPet(9, 'Kit', 3, 'sold'), first))
    assert.ok(haveSameMap(await storedPet(9, 'Kit', 3), created))
  })
})
