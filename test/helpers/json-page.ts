/**
 * Checks that a store's pages as JSON text (`Store.page`) say exactly what
 * its `list()` says, on pets whose names and numbers are hard to write as
 * JSON. Used by test/json-page.test.ts and, through sqlite-roundtrip.ts, on
 * every runtime's SQLite driver (so: node:assert only, nothing Node-only).
 *
 * @module
 */
import assert from 'node:assert/strict'
import { type Int64, int64Of, type NewPet, type Pet, type PetStatus } from '../../src/api/schemas.js'
import { builtInOf, type JsonPage, type ListQuery, type PetStore } from '../../src/store/store.js'

const MAX = Number.MAX_SAFE_INTEGER
const STATUSES: ReadonlyArray<PetStatus | undefined> = ['available', undefined, 'sold', 'pending']

/** Names JSON must escape, or must not: quotes, backslashes, every control character, emoji, U+2028, 255 code points. */
export const HARD_NAMES: readonly string[] = [
  'Rex',
  'say "hi"',
  '\\',
  '\\"',
  '\\u0041 is not A',
  "O'Brien; DROP TABLE x; --",
  Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join(''),
  'tab\there\nnewline\r\b\f',
  '\u007f delete \u0080 \u009f',
  'line\u2028separator\u2029paragraph',
  '🐶🐱 🐕‍🦺 👩🏽‍💻',
  '𝄞 中文 Ñandú',
  'byte order \ufeff mark',
  '</script><!--',
  '{"id":1}',
  '],[',
  ' spaces ',
  '🐶'.repeat(255),
  'é'.repeat(255),
  'x'.repeat(255),
]

/** Category ids at the edges of what a JSON number holds exactly, and of int64 beyond it (as bigints). */
export const HARD_CATEGORY_IDS: readonly Int64[] = [
  MAX,
  -MAX,
  0,
  -1,
  2 ** 31,
  -(2 ** 32),
  2 ** 53 - 2,
  2n ** 63n - 1n,
  -(2n ** 63n),
  2n ** 53n + 1n,
  -(2n ** 53n) - 1n,
]

/**
 * JSON text of pets (one, a page, or an Error) parsed with every categoryId exact, as
 * {@link Int64}s (`JSON.parse` rounds those beyond 2^53): the digits after `"categoryId":`
 * are read as a string first. That text cannot occur inside a string, where quotes are escaped.
 */
export function parseExactJson(json: string): any {
  return JSON.parse(json.replace(/"categoryId":(-?[0-9]+)(?=[,}])/g, '"categoryId":"$1"'), (key, value) =>
    key === 'categoryId' && typeof value === 'string' ? int64Of(value) : value,
  )
}

/** Creates one pet per hard name, with the hard category ids and statuses (absent too) in turn. */
export async function createHardPets(store: PetStore): Promise<Pet[]> {
  const pets: Pet[] = []
  for (const [i, name] of HARD_NAMES.entries()) {
    const pet: NewPet = { name, categoryId: HARD_CATEGORY_IDS[i % HARD_CATEGORY_IDS.length]! }
    const status = STATUSES[i % STATUSES.length]
    if (status !== undefined) pet.status = status
    pets.push(await store.create(pet))
  }
  return pets
}

/** The pages as JSON of one of this package's stores (its `Store.page`); fails for any other store. */
export function jsonPages(store: PetStore): (query: ListQuery) => Promise<JsonPage> {
  const own = builtInOf(store)
  assert.ok(own, 'the store is built in')
  assert.equal(typeof own.page, 'function', 'the store writes pages as JSON')
  return async (query) => own.page(query)
}

/**
 * For every status filter, several limits and every cursor (none, each id,
 * past the end, and `extraCursors`): `JSON.parse(page.json)` deep-equals
 * `list()` of the same query, `lastId` is its last id, `more` says whether
 * `list()` finds a pet after it. Returns the number of queries compared.
 */
export async function assertJsonPagesMatchList(
  store: PetStore,
  { limits = [1, 2, 3, 100], extraCursors = [] as number[] } = {},
): Promise<number> {
  const pages = jsonPages(store)
  const all = await store.list({ limit: 100 })
  assert.ok(all.length > 0, 'the store holds pets to compare')
  const ids = all.map((pet) => pet.id)
  const cursors: Array<number | undefined> = [undefined, 0, ...ids, (ids.at(-1) ?? 0) + 1, ...extraCursors]
  let compared = 0
  for (const status of [undefined, 'available', 'pending', 'sold'] as const) {
    for (const limit of limits) {
      for (const after of cursors) {
        const query: ListQuery = { status, limit, after }
        const [page, expected, longer] = await Promise.all([
          pages(query),
          store.list(query),
          store.list({ ...query, limit: limit + 1 }),
        ])
        const what = `page ${JSON.stringify(query)}`
        assert.equal(typeof page.json, 'string', what)
        assert.deepStrictEqual(parseExactJson(page.json), expected, what)
        assert.equal(page.lastId, expected.at(-1)?.id, `${what}: lastId`)
        assert.equal(page.more, longer.length > limit, `${what}: more`)
        compared++
      }
    }
  }
  return compared
}
