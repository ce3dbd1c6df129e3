/**
 * The tests of the conformance suite: what every `PetStore` must do (see
 * `src/store/store.ts`), each given a new, empty store.
 *
 * @module
 */
import type { NewPet, Pet, PetStatus } from '../api/schemas.js'
import type { PetStore } from '../store/store.js'
import { ConformanceError, deepEqual, equal, ok, show } from './assert.js'

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

const STATUSES: ReadonlyArray<PetStatus | undefined> = ['available', 'pending', 'sold', undefined]

/** The `i`-th pet of a batch: statuses rotate, absent one time in four, so every filter has something to find. */
function nthPet(i: number, label = 'pet'): NewPet {
  const pet: NewPet = { name: `${label} ${i}`, categoryId: i }
  const status = STATUSES[i % STATUSES.length]
  if (status !== undefined) pet.status = status
  return pet
}

/** The pet a store must give back for `input` stored under `id`: the Pet fields only, no `status` key when absent. */
function stored(id: number, input: NewPet): Pet {
  const pet: Pet = { id, name: input.name, categoryId: input.categoryId }
  if (input.status !== undefined) pet.status = input.status
  return pet
}

/** Awaits `work`, saying which call of the store rejected: the store's own error alone rarely names it. */
async function attempt<T>(call: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (cause) {
    const message = cause instanceof Error ? `${cause.name}: ${cause.message}` : show(cause)
    throw new ConformanceError(`${call} rejected: ${message}`, { cause })
  }
}

/** `get(id)`, with the call named if it rejects. */
const get = (store: PetStore, id: number) => attempt(`get(${id})`, () => store.get(id))

/** Creates `input` and checks the answer: a plain pet with a new positive safe integer id, fields as given. */
async function create(store: PetStore, input: NewPet): Promise<Pet> {
  const pet = await attempt(`create(${show(input)})`, () => store.create(input))
  ok(pet !== null && typeof pet === 'object', `create(${show(input)}) must return a pet, got ${show(pet)}`)
  ok(
    typeof pet.id === 'number' && Number.isSafeInteger(pet.id) && pet.id >= 1,
    `create(${show(input)}) must return a positive safe integer id as a number, got ${show(pet.id)} (${typeof pet.id})`,
  )
  deepEqual(pet, stored(pet.id, input), `create(${show(input)}) must return the pet as stored`)
  return pet
}

/** Creates the pets one after the other, so their ids are known to ascend in this order. */
async function createInOrder(store: PetStore, inputs: readonly NewPet[]): Promise<Pet[]> {
  const pets: Pet[] = []
  for (const input of inputs) pets.push(await create(store, input))
  return pets
}

const batch = (count: number, label?: string) => Array.from({ length: count }, (_, i) => nthPet(i, label))

/** Reads one page and checks what holds for any page: ascending ids after the cursor, at most `limit`, matching the filter. */
async function page(store: PetStore, query: { status?: PetStatus; limit: number; after?: number }): Promise<Pet[]> {
  const call = `list(${show(query)})`
  const pets = await attempt(call, () => store.list(query))
  ok(Array.isArray(pets), `${call} must return an array, got ${show(pets)}`)
  ok(pets.length <= query.limit, `${call} returned ${pets.length} pets, more than the limit`)
  let previous = query.after ?? 0
  for (const pet of pets) {
    ok(
      pet !== null && typeof pet === 'object' && typeof pet.id === 'number',
      `${call} returned ${show(pet)}, not a pet with a numeric id`,
    )
    ok(
      pet.id > previous,
      query.after !== undefined && pet.id <= query.after
        ? `${call} returned id ${pet.id}, which is not after ${query.after}`
        : `${call} returned id ${pet.id} after id ${previous}: ids must ascend`,
    )
    if (query.status !== undefined) {
      equal(pet.status, query.status, `${call} returned pet ${pet.id} whose status does not match the filter`)
    }
    previous = pet.id
  }
  return pets
}

/** Every pet matching `status`, walked page by page with `after`, the way `Link: rel="next"` is followed. */
async function walk(store: PetStore, limit: number, status?: PetStatus, from?: number): Promise<Pet[]> {
  const pets: Pet[] = []
  let after = from
  for (;;) {
    const query = { limit, ...(status === undefined ? {} : { status }), ...(after === undefined ? {} : { after }) }
    const found = await page(store, query)
    pets.push(...found)
    if (found.length < limit) return pets
    after = found[found.length - 1]!.id
  }
}

/** Creates `input`, then checks that create, get and list all give it back exactly. */
async function roundTrip(store: PetStore, input: NewPet): Promise<void> {
  const pet = await create(store, input)
  const expected = stored(pet.id, input)
  deepEqual(await get(store, pet.id), expected, `get(${pet.id}) after create(${show(input)})`)
  deepEqual(
    await page(store, { limit: 1, after: pet.id - 1 }),
    [expected],
    `list({ limit: 1, after: ${pet.id - 1} }) after create(${show(input)})`,
  )
}

/** Names that break naive quoting, LIKE patterns, escaping, encodings or normalisation. No U+0000: PostgreSQL text cannot hold it. */
const TRICKY_NAMES = [
  "O'Brien",
  "''",
  'say "hi"',
  '`backtick`',
  "'; DROP TABLE x; --",
  '"; DROP TABLE x; --',
  "Robert'); DROP TABLE petstore_pets;--",
  '%',
  '_',
  '%_%',
  '100% _real_',
  '\\',
  '\\\\',
  "\\'",
  '\\%',
  '\\_',
  'C:\\pets\\new\\n',
  '$1',
  '?',
  ':name',
  '@id',
  '/* comment */',
  '-- comment',
  '🐶',
  '🐕‍🦺 service dog',
  '👩‍👩‍👧‍👦',
  '🇫🇷',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'café',
  'cafe\u0301',
  'Straße',
  'İstanbul',
  '日本語の名前',
  'שלום',
  'مرحبا',
  '\u200bzero width',
  '\ufeffbyte order mark',
  '\ufffd',
  '  spaces around  ',
  'trailing space ',
  'tab\there',
  'line\nbreak',
  'crlf\r\nend',
  'separators\u2028\u2029',
  'bell\u0007',
  'delete\u007f',
  'null',
  'NULL',
  'undefined',
  '0',
  '{}',
  '<script>alert(1)</script>',
]

/** Exactly 255 code points each: one, two, three and four UTF-8 bytes per character, and a mix. */
const LONGEST_NAMES = [
  'a'.repeat(255),
  'é'.repeat(255),
  '日'.repeat(255),
  '🐶'.repeat(255),
  `${'x'.repeat(85)}${'ß'.repeat(85)}${'🐱'.repeat(85)}`,
]

/** Category ids at the edges of the safe integer range and of 32-bit columns. */
const EDGE_CATEGORY_IDS = [
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  0,
  -1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 2,
]

/**
 * Category ids past ±(2^53−1), where a number is no longer exact: the int64 ends, and
 * 2^53 ± 1 (9007199254740993 becomes 9007199254740992 through a double). Bigints, the
 * form the API gives them in.
 */
const INT64_CATEGORY_IDS = [
  2n ** 63n - 1n,
  -(2n ** 63n),
  -(2n ** 63n) + 1n,
  2n ** 53n,
  2n ** 53n + 1n,
  -(2n ** 53n),
  -(2n ** 53n) - 1n,
  2n ** 62n + 1n,
]

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
