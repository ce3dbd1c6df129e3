/**
 * The tests of the conformance suite: what every `PetStore` must do (see
 * `src/store/store.ts`), each given a new, empty store.
 *
 * @module
 */
import type { Pet } from '../api/schemas.js'
import type { PetStore } from '../store/store.js'
import { deepEqual, equal, ok, show } from './assert.js'
import { attempt, batch, create, createInOrder, get, nthPet, page, roundTrip, stored, walk } from './checked-calls.js'
import { EDGE_CATEGORY_IDS, INT64_CATEGORY_IDS, LONGEST_NAMES, TRICKY_NAMES } from './hard-values.js'

/**
 * The names of the conformance tests, in the order they run. They are
 * stable: a store skips one by its name (with a reason), and a renamed test
 * is a breaking change of `petstore-server/testing`.
 */
export const STORE_CONFORMANCE_TESTS = [
  'an empty store lists no pets',
  'create returns the stored pet with a new positive integer id',
  'ids are unique and increasing',
  'get returns the pet as created',
  'a pet created without status has no status key',
  'get of an unknown id returns undefined',
  'list returns pets in ascending id order',
  'list returns at most limit pets',
  'list filters by status',
  'list returns only pets after the cursor',
  'paging with after visits every pet exactly once while pets are added',
  '500 concurrent creates give 500 distinct ids, all retrievable',
  'names with quotes, emoji and SQL metacharacters round-trip exactly',
  'names of exactly 255 characters round-trip exactly',
  'the largest and smallest safe integer categoryId round-trip',
  'int64 categoryId beyond the safe range round-trips exactly, as a bigint',
  'ping resolves',
  'close is idempotent',
] as const

/** The name of one conformance test. */
export type StoreConformanceTest = (typeof STORE_CONFORMANCE_TESTS)[number]

type Case = (store: PetStore) => Promise<void>

/** The body of each test; `satisfies` keeps this map and the list of names in step. */
export const CASES = {
  async 'an empty store lists no pets'(store) {
    deepEqual(await page(store, { limit: 100 }), [], 'list({ limit: 100 }) on an empty store')
    deepEqual(await page(store, { limit: 100, after: 0 }), [], 'list({ limit: 100, after: 0 }) on an empty store')
    for (const status of ['available', 'pending', 'sold'] as const) {
      deepEqual(
        await page(store, { limit: 100, status }),
        [],
        `list({ limit: 100, status: '${status}' }) on an empty store`,
      )
    }
  },

  async 'create returns the stored pet with a new positive integer id'(store) {
    // create() checks the shape: a positive safe integer id (a number, not a string or a bigint), the fields as given.
    const pets = await createInOrder(store, [
      { name: 'Rex', categoryId: 1, status: 'available' },
      { name: 'Tom', categoryId: 2, status: 'pending' },
      { name: 'Kit', categoryId: 3, status: 'sold' },
      { name: 'Bo', categoryId: 4 },
    ])
    equal(new Set(pets.map((pet) => pet.id)).size, pets.length, 'four creates must give four different ids')
  },

  async 'ids are unique and increasing'(store) {
    const pets = await createInOrder(store, batch(20))
    for (let i = 1; i < pets.length; i++) {
      ok(
        pets[i]!.id > pets[i - 1]!.id,
        `ids must increase: create number ${i + 1} gave id ${pets[i]!.id} after id ${pets[i - 1]!.id}`,
      )
    }
  },

  async 'get returns the pet as created'(store) {
    const inputs = batch(8)
    const pets = await createInOrder(store, inputs)
    for (const [i, pet] of pets.entries()) {
      deepEqual(await get(store, pet.id), stored(pet.id, inputs[i]!), `get(${pet.id})`)
    }
  },

  async 'a pet created without status has no status key'(store) {
    // `status: undefined` is how an optional property often arrives; it must be stored as absent too.
    for (const input of [
      { name: 'Nameless', categoryId: 1 },
      { name: 'Undefined', categoryId: 2, status: undefined },
    ]) {
      const pet = await create(store, input)
      ok(!('status' in pet), `create(${show(input)}) returned a status key: ${show(pet)}`)
      const got = await get(store, pet.id)
      ok(got && !('status' in got), `get(${pet.id}) returned a status key: ${show(got)}`)
      const [listed] = await page(store, { limit: 1, after: pet.id - 1 })
      ok(listed && !('status' in listed), `list() returned a status key: ${show(listed)}`)
      for (const status of ['available', 'pending', 'sold'] as const) {
        const filtered = await page(store, { limit: 100, status })
        ok(
          !filtered.some((other) => other.id === pet.id),
          `list({ status: '${status}' }) returned a pet without status`,
        )
      }
    }
  },

  async 'get of an unknown id returns undefined'(store) {
    equal(await get(store, 1), undefined, 'get(1) on an empty store')
    const pet = await create(store, nthPet(1))
    for (const id of [pet.id + 1, pet.id + 1000, 0, -1, -pet.id, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      equal(await get(store, id), undefined, `get(${id}) with only pet ${pet.id} stored`)
    }
  },

  async 'list returns pets in ascending id order'(store) {
    const inputs = batch(25)
    const pets = await createInOrder(store, inputs)
    deepEqual(await page(store, { limit: 100 }), pets, 'list({ limit: 100 }) must return every pet by ascending id')
  },

  async 'list returns at most limit pets'(store) {
    const pets = await createInOrder(store, batch(10))
    for (const limit of [1, 2, 3, 9, 10, 11, 101]) {
      deepEqual(await page(store, { limit }), pets.slice(0, limit), `list({ limit: ${limit} }) with 10 pets stored`)
    }
  },

  async 'list filters by status'(store) {
    const pets = await createInOrder(store, batch(14))
    for (const status of ['available', 'pending', 'sold'] as const) {
      const matching = pets.filter((pet) => pet.status === status)
      deepEqual(await page(store, { limit: 100, status }), matching, `list({ limit: 100, status: '${status}' })`)
      deepEqual(
        await page(store, { limit: 2, status }),
        matching.slice(0, 2),
        `list({ limit: 2, status: '${status}' }) must be the first two matching pets`,
      )
    }
  },

  async 'list returns only pets after the cursor'(store) {
    const pets = await createInOrder(store, batch(12))
    const last = pets[pets.length - 1]!.id
    deepEqual(await page(store, { limit: 100, after: 0 }), pets, 'list({ after: 0 })')
    for (const index of [0, 4, 10]) {
      const after = pets[index]!.id
      deepEqual(await page(store, { limit: 100, after }), pets.slice(index + 1), `list({ after: ${after} })`)
      deepEqual(
        await page(store, { limit: 2, after }),
        pets.slice(index + 1, index + 3),
        `list({ limit: 2, after: ${after} })`,
      )
      const sold = pets.slice(index + 1).filter((pet) => pet.status === 'sold')
      deepEqual(
        await page(store, { limit: 100, after, status: 'sold' }),
        sold,
        `list({ after: ${after}, status: 'sold' })`,
      )
    }
    deepEqual(await page(store, { limit: 100, after: last }), [], `list({ after: ${last} }) after the last pet`)
    const far = Number.MAX_SAFE_INTEGER
    deepEqual(await page(store, { limit: 100, after: far }), [], `list({ after: ${far} })`)
  },

  async 'paging with after visits every pet exactly once while pets are added'(store) {
    const before = await createInOrder(store, batch(30, 'first'))
    // Writers keep 4 creates in flight, so on a pooled database ids are handed out and committed out of order.
    const added: Pet[] = []
    let next = 0
    const writer = async () => {
      while (next < 60) added.push(await create(store, nthPet(next++, 'added')))
    }
    // Awaited together, so a failing writer is reported even when a walk fails first.
    const [[everything, available]] = await Promise.all([
      Promise.all([walk(store, 7), walk(store, 3, 'available')]),
      Promise.all([writer(), writer(), writer(), writer()]),
    ])
    // Pets added after a walk passed their place are found by carrying on from where it stopped.
    const lastSeen = (pets: Pet[]) => (pets.length === 0 ? undefined : pets[pets.length - 1]!.id)
    everything.push(...(await walk(store, 7, undefined, lastSeen(everything))))
    available.push(...(await walk(store, 3, 'available', lastSeen(available))))

    const all = [...before, ...added].sort((a, b) => a.id - b.id)
    equal(
      new Set(all.map((pet) => pet.id)).size,
      all.length,
      '90 creates (60 of them 4 at a time) must give 90 distinct ids',
    )
    const seen = everything.map((pet) => pet.id)
    equal(new Set(seen).size, seen.length, 'a walk must see no pet twice')
    for (const pet of all) {
      ok(
        seen.includes(pet.id),
        `the walk with limit 7 missed pet ${pet.id}, created ${before.includes(pet) ? 'before' : 'during'} the walk`,
      )
    }
    deepEqual(everything, all, 'the walk with limit 7 must visit every pet exactly once, in ascending id order')
    deepEqual(
      available,
      all.filter((pet) => pet.status === 'available'),
      "the walk over status 'available' with limit 3 must visit every such pet exactly once",
    )
  },

  async '500 concurrent creates give 500 distinct ids, all retrievable'(store) {
    const inputs = batch(500, 'concurrent')
    // create() also checks each answer against its own input: no answer may belong to another create.
    const pets = await Promise.all(inputs.map((input) => create(store, input)))
    equal(new Set(pets.map((pet) => pet.id)).size, 500, '500 concurrent creates must give 500 distinct ids')
    const got = await Promise.all(pets.map((pet) => get(store, pet.id)))
    for (const [i, pet] of pets.entries()) deepEqual(got[i], pet, `get(${pet.id}) after 500 concurrent creates`)
    const sorted = [...pets].sort((a, b) => a.id - b.id)
    deepEqual(await walk(store, 100), sorted, 'listing after 500 concurrent creates must give them all by ascending id')
  },

  async 'names with quotes, emoji and SQL metacharacters round-trip exactly'(store) {
    for (const [i, name] of TRICKY_NAMES.entries()) await roundTrip(store, { name, categoryId: i })
  },

  async 'names of exactly 255 characters round-trip exactly'(store) {
    for (const [i, name] of LONGEST_NAMES.entries()) {
      equal([...name].length, 255, 'the suite itself: a test name has 255 code points')
      await roundTrip(store, { name, categoryId: i, status: 'available' })
    }
  },

  async 'the largest and smallest safe integer categoryId round-trip'(store) {
    for (const categoryId of EDGE_CATEGORY_IDS) await roundTrip(store, { name: `category ${categoryId}`, categoryId })
  },

  async 'int64 categoryId beyond the safe range round-trips exactly, as a bigint'(store) {
    // roundTrip compares with Object.is: a number, or a bigint of another value, is a difference.
    for (const categoryId of INT64_CATEGORY_IDS) await roundTrip(store, { name: `category ${categoryId}`, categoryId })
  },

  async 'ping resolves'(store) {
    if (store.ping === undefined) return
    // First on the fresh store: a lazy store must get ready (schema, connection) inside ping.
    await attempt('ping() on a new store', () => store.ping!())
    await create(store, nthPet(1))
    await attempt('ping() after a create', () => store.ping!())
  },

  async 'close is idempotent'(store) {
    if (store.close === undefined) return
    // Used first, so a lazy store has a connection open to release.
    await create(store, nthPet(1))
    // Twice at once (a signal during shutdown), then once more after.
    await attempt('close() called twice at once', () => Promise.all([store.close!(), store.close!()]))
    await attempt('close() called a third time', () => store.close!())
  },
} satisfies Record<StoreConformanceTest, Case>
