/** The store conformance suite on every store that needs no server. */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createPetstore, memoryStore, type NewPet, type Pet, type PetStore } from '../src/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { AUTO_ORDER, loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import {
  type ConformanceTestOptions,
  STORE_CONFORMANCE_TESTS,
  type StoreConformanceOptions,
  storeConformance,
} from '../src/testing.js'
import { AUTH, KEY } from './helpers/client.js'
import { assertOneBadRowFailsAlone, REJECTED_NAME } from './helpers/group-commit.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-stores-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const sqliteFile = () => sqliteStore({ path: join(dir, `${files++}.db`) })
const runner = { describe, it, before, after }

storeConformance({ name: 'memoryStore', makeStore: () => memoryStore() }, runner)
storeConformance({ name: 'sqliteStore (file)', makeStore: sqliteFile }, runner)
storeConformance({ name: 'sqliteStore (:memory:)', makeStore: () => sqliteStore({ path: ':memory:' }) }, runner)

/** The tests `storeConformance` registers, collected by a stand-in runner so they can be run by hand. */
function collect(options: StoreConformanceOptions) {
  const tests: Array<{ name: string; options: ConformanceTestOptions; body: () => Promise<void> }> = []
  const hooks: Array<() => Promise<void>> = []
  storeConformance(options, {
    describe: (_name, body) => body(),
    it: (name, testOptions, body) => tests.push({ name, options: testOptions ?? {}, body }),
    afterAll: (hook) => hooks.push(hook),
  })
  return { tests, hooks }
}

/** Names of the conformance tests `makeStore`'s stores fail, each with its message. */
async function failures(makeStore: () => PetStore): Promise<Record<string, string>> {
  const failed: Record<string, string> = {}
  for (const test of collect({ name: 'broken', makeStore }).tests) {
    await test.body().catch((error: Error) => {
      failed[test.name] = error.message
    })
  }
  return failed
}

/** A memory store with some methods replaced; `inner` is the healthy store underneath. */
const broken = (change: (inner: PetStore) => Partial<PetStore>) => () => {
  const inner = memoryStore()
  return { ...inner, ...change(inner) }
}

/** The pet to store: without a `status` key when none was given, as the contract wants. */
function asPet(id: number, { name, categoryId, status }: NewPet): Pet {
  return status === undefined ? { id, name, categoryId } : { id, name, categoryId, status }
}

/** Reads the next id, then awaits before storing: concurrent creates get the same id. */
function raceForIds(): PetStore {
  const inner = memoryStore()
  const pets = new Map<number, Pet>()
  return {
    ...inner,
    async create(input) {
      const id = pets.size + 1
      await new Promise((resolve) => setTimeout(resolve, 0))
      const pet = asPet(id, input)
      pets.set(id, pet)
      return pet
    },
    get: async (id) => pets.get(id),
    list: async ({ status, limit, after = 0 }) =>
      [...pets.values()].filter((pet) => pet.id > after && (!status || pet.status === status)).slice(0, limit),
  }
}

/**
 * Hands out ids in order but makes every third pet visible a little later, as
 * concurrent transactions on a pooled database commit: a walk can pass an id
 * that appears behind it afterwards.
 */
function lateCommits(): PetStore {
  const pets: Pet[] = []
  let lastId = 0
  return {
    async create(input) {
      const id = ++lastId
      const pet = asPet(id, input)
      if (id % 3 === 1) await new Promise((resolve) => setTimeout(resolve, 3))
      pets.push(pet)
      pets.sort((a, b) => a.id - b.id)
      return pet
    },
    get: async (id) => pets.find((pet) => pet.id === id),
    list: async ({ status, limit, after = 0 }) =>
      pets.filter((pet) => pet.id > after && (!status || pet.status === status)).slice(0, limit),
  }
}

describe('storeConformance itself', () => {
  const ok = { name: 'memoryStore', makeStore: () => memoryStore() }

  it('registers every test by its stable name, with the skip reason or the timeout as options', () => {
    const { tests } = collect({ ...ok, skip: { 'ping resolves': 'no health check' }, timeout: 9000 })
    assert.deepEqual(
      tests.map((test) => test.name),
      [...STORE_CONFORMANCE_TESTS],
    )
    for (const test of tests) {
      assert.deepEqual(test.options, test.name === 'ping resolves' ? { skip: 'no health check' } : { timeout: 9000 })
    }
  })

  it('refuses a skip without a reason, of an unknown test, and bad arguments', () => {
    const refuse = (options: unknown, message: RegExp) =>
      assert.throws(() => collect(options as StoreConformanceOptions), { name: 'TypeError', message })
    refuse({ ...ok, skip: { 'ping resolves': '' } }, /skipping "ping resolves" needs a reason/)
    refuse({ ...ok, skip: { 'ping resolves': '  ' } }, /needs a reason/)
    refuse({ ...ok, skip: { 'ping resolves': true } }, /needs a reason \(a non-empty string\), got true/)
    refuse({ ...ok, skip: { 'ping works': 'renamed' } }, /cannot skip "ping works": there is no such test/)
    refuse({ ...ok, skip: ['ping resolves'] }, /`skip` must be an object/)
    refuse({ ...ok, name: '' }, /`name` must be a non-empty string/)
    refuse({ name: 'x' }, /`makeStore` must be a function/)
    refuse({ ...ok, timeout: 0 }, /`timeout` must be a positive number/)
    assert.throws(() => storeConformance(ok, { describe } as never), /the runner must have a `it` function/)
  })

  it('fails a store that is not empty, saying so', async () => {
    const seeded = () => memoryStore({ pets: [{ name: 'Old', categoryId: 1 }] })
    const failed = await failures(seeded)
    // The ping test makes no call before ping, so it does not look.
    assert.deepEqual(
      Object.keys(failed),
      STORE_CONFORMANCE_TESTS.filter((test) => test !== 'ping resolves'),
    )
    for (const message of Object.values(failed)) assert.match(message, /makeStore\(\) must return a new, empty store/)
  })

  it('closes, after all, the store of a test that never finished', async () => {
    let closed = 0
    const { tests, hooks } = collect({
      name: 'hangs',
      makeStore: () => ({ ...memoryStore(), create: () => new Promise(() => {}), close: async () => void closed++ }),
    })
    void tests[1]!.body()
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(closed, 0)
    for (const hook of hooks) await hook()
    assert.equal(closed, 1)
  })

  // Each broken store, and exactly the tests that catch it.
  const cases: Array<[string, () => PetStore, string[]]> = [
    [
      'lists in descending order',
      broken((inner) => ({ list: async (query) => (await inner.list(query)).reverse() })),
      [
        'list returns pets in ascending id order',
        'list returns at most limit pets',
        'list filters by status',
        'list returns only pets after the cursor',
        'paging with after visits every pet exactly once while pets are added',
        '500 concurrent creates give 500 distinct ids, all retrievable',
      ],
    ],
    [
      'reads the next id before it awaits (so concurrent creates share ids)',
      raceForIds,
      [
        'paging with after visits every pet exactly once while pets are added',
        '500 concurrent creates give 500 distinct ids, all retrievable',
      ],
    ],
    [
      'makes a pet visible after a later one (ids handed out, then committed out of order)',
      lateCommits,
      ['paging with after visits every pet exactly once while pets are added'],
    ],
    [
      'loses characters outside the BMP (MySQL utf8mb3)',
      broken((inner) => ({
        create: (pet) => inner.create({ ...pet, name: pet.name.replace(/[\u{10000}-\u{10FFFF}]/gu, '?') }),
      })),
      [
        'names with quotes, emoji and SQL metacharacters round-trip exactly',
        'names of exactly 255 characters round-trip exactly',
      ],
    ],
    [
      'keeps categoryId in 32 bits',
      broken((inner) => ({ create: (pet) => inner.create({ ...pet, categoryId: Number(pet.categoryId) | 0 }) })),
      [
        'the largest and smallest safe integer categoryId round-trip',
        'int64 categoryId beyond the safe range round-trips exactly, as a bigint',
      ],
    ],
    [
      'keeps categoryId in a double (as JSON.parse would)',
      broken((inner) => ({ create: (pet) => inner.create({ ...pet, categoryId: Number(pet.categoryId) }) })),
      ['int64 categoryId beyond the safe range round-trips exactly, as a bigint'],
    ],
    [
      'answers null for an unknown id',
      broken((inner) => ({ get: async (id) => (await inner.get(id)) ?? (null as never) })),
      ['get of an unknown id returns undefined'],
    ],
    [
      'fails when closed twice',
      broken(() => {
        let closed = false
        return {
          async close() {
            if (closed) throw new Error('Called end on pool more than once')
            closed = true
          },
        }
      }),
      ['close is idempotent'],
    ],
  ]
  for (const [what, makeStore, expected] of cases) {
    it(`fails a store that ${what}`, async () => {
      assert.deepEqual(Object.keys(await failures(makeStore)), expected)
    })
  }
})

describe('memoryStore seeded with ids', () => {
  it('keeps given ids (in any order), numbers the others after them, and finds every pet by id', async () => {
    const store = memoryStore({
      pets: [
        { id: 40, name: 'Forty', categoryId: 4 },
        { name: 'Next', categoryId: 5, status: 'sold' },
        { id: 7, name: 'Seven', categoryId: 7, status: 'available' },
        { id: 2 ** 40, name: 'Far', categoryId: 1 },
      ],
    })
    const all = await store.list({ limit: 10 })
    assert.deepEqual(
      all.map((pet) => pet.id),
      [7, 40, 2 ** 40, 2 ** 40 + 1],
    )
    // Ids are sparse here, so get cannot find a pet at `id - 1` and searches.
    for (const pet of all) assert.equal(await store.get(pet.id), pet)
    for (const id of [0, -1, 1, 6, 8, 39, 41, 7.5, 2 ** 40 - 1, 2 ** 40 + 2, Number.MAX_SAFE_INTEGER]) {
      assert.equal(await store.get(id), undefined, String(id))
    }
    const created = await store.create({ name: 'Created', categoryId: 6 })
    assert.equal(created.id, 2 ** 40 + 2)
    assert.equal(await store.get(created.id), created)
  })

  it('refuses duplicate, non-integer and non-positive ids', () => {
    for (const ids of [[3, 3], [0], [-2], [1.5], [Number.MAX_SAFE_INTEGER + 1]]) {
      assert.throws(() => memoryStore({ pets: ids.map((id) => ({ id, name: 'x', categoryId: 1 })) }), {
        name: 'TypeError',
        message: /seeded pet ids must be unique positive integers/,
      })
    }
  })

  it('finds pets by id with dense ids too, and returns frozen pets without a status key when none was given', async () => {
    const store = memoryStore()
    const pets = []
    for (let i = 0; i < 100; i++) pets.push(await store.create({ name: `p${i}`, categoryId: i }))
    for (const pet of pets) assert.equal(await store.get(pet.id), pet)
    assert.ok(Object.isFrozen(pets[0]))
    assert.deepEqual(Object.keys(pets[0]!), ['id', 'name', 'categoryId'])
    assert.equal(await store.get(101), undefined)
  })

  it('gives out frozen pets when they were stored through the handler, which does not freeze them', async () => {
    const store = memoryStore({ pets: [{ name: 'Rex', categoryId: 1, status: 'sold' }] })
    const handler = createPetstore({ store, keys: [KEY] })
    const response = await handler(
      new Request('http://x/v1/pets', {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: '{"name":"Tom","categoryId":2}',
      }),
    )
    assert.equal(response.status, 201)
    const [seeded, created] = await store.list({ limit: 2 })
    for (const pet of [seeded, created, await store.get(2)]) assert.ok(Object.isFrozen(pet), JSON.stringify(pet))
    assert.throws(() => {
      ;(created as { name: string }).name = 'changed'
    }, TypeError)
    assert.equal((await store.get(2))?.name, 'Tom')
  })
})

describe('sqliteStore group commit', () => {
  it('a row the database refuses fails only its own create, the rest of its batch is stored', async () => {
    const path = join(dir, `${files++}.db`)
    const store = sqliteStore({ path })
    try {
      await store.ping?.()
      const other = (await loadSqliteDriver(AUTO_ORDER)).open(path)
      other
        .prepare(`create trigger refuse before insert on petstore_pets when new.name = '${REJECTED_NAME}'
          begin select raise(abort, 'refused'); end`)
        .run([])
      other.close()
      await assertOneBadRowFailsAlone(store)
    } finally {
      await store.close?.()
    }
  })
})
