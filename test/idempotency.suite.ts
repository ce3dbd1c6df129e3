/**
 * `Idempotency-Key` on createPet, over HTTP requests to the handler, for one store: every case of
 * issue 64's "Done means" that one process can show. test/idempotency.test.ts runs it per store of
 * this process, test/workerd.test.ts on D1 inside workerd.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createPetstore, type FetchHandler, type PetStore } from '../src/index.js'
import { withFaults } from '../src/testing.js'

/** What a case is served by: a handler over a new, empty store, and how to close it. */
export interface Served {
  handler: FetchHandler
  close(): Promise<void>
}

/** How a case asks for its handler: keys kept `idempotencyTtl` ms (24 h by default), `Prefer: fault=…` honoured. */
export type Serve = (options: { idempotencyTtl?: number }) => Promise<Served>

export interface KeyedSuiteOptions {
  describe: (name: string, body: () => void) => void
  it: (name: string, body: () => Promise<void>) => void
  serve: Serve
  /**
   * Why an empty key, or one with a control character other than a tab, cannot reach the handler
   * where the way to it drops or refuses them: those cases are left out there.
   */
  rawKeysLost?: string
}

/** {@link Serve} for a store of this process: each case gets the store `open` makes, under `createPetstore`. */
export const servingStore =
  (open: () => PetStore | Promise<PetStore>): Serve =>
  async (options) => {
    const store = await open()
    const handler = withFaults(createPetstore({ store, keys: KEYS, ...options }), { prefer: true })
    return { handler, close: async () => store.close?.() }
  }

const KEYS = ['first-key', 'second-key']

/** A `POST /v1/pets` of `body` (text as it is, or an object as JSON) with `key`, if any, under `apiKey`. */
export function post(
  handler: FetchHandler,
  body: unknown,
  key?: string,
  more: Record<string, string> = {},
  apiKey = 'first-key',
): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    ...more,
  }
  if (key !== undefined) headers['idempotency-key'] = key
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return handler(new Request('http://petstore.test/v1/pets', { method: 'POST', headers, body: text }))
}

/** How many pets the store holds (fewer than 100 in these tests). */
export async function count(handler: FetchHandler): Promise<number> {
  const answer = await handler(
    new Request('http://petstore.test/v1/pets?limit=100', { headers: { authorization: 'Bearer first-key' } }),
  )
  return ((await answer.json()) as unknown[]).length
}

/** The keyed cases on the store `open` makes; each test gets a store of its own, closed after it. */
export function runKeyedSuite(name: string, { describe, it, serve, rawKeysLost }: KeyedSuiteOptions): void {
  /** A test on a handler over a fresh store. */
  const on =
    (test: (handler: FetchHandler) => Promise<void>, options: { idempotencyTtl?: number } = {}) =>
    async () => {
      const { handler, close } = await serve(options)
      try {
        await test(handler)
      } finally {
        await close()
      }
    }

  describe(`Idempotency-Key on ${name}`, () => {
    it(
      'a sequential retry answers the same pet, marked as a replay; the first answer is not',
      on(async (handler) => {
        const first = await post(handler, { name: 'Rex', categoryId: 1 }, 'retry-1')
        assert.equal(first.status, 201)
        assert.equal(first.headers.get('idempotent-replayed'), null)
        const body = await first.text()
        // The same JSON value, spaced and ordered otherwise, and the key as a Structured Field string.
        for (const [payload, key] of [
          ['{ "categoryId": 1,\n  "name": "Rex" }', 'retry-1'],
          [{ name: 'Rex', categoryId: 1 }, '"retry-1"'],
        ] as const) {
          const again = await post(handler, payload, key)
          assert.equal(again.status, 201)
          assert.equal(again.headers.get('idempotent-replayed'), 'true')
          assert.equal(again.headers.get('location'), first.headers.get('location'))
          assert.equal(await again.text(), body)
        }
        assert.equal(await count(handler), 1)
        // Without a key, nothing changes: a new pet, no marker.
        const plain = await post(handler, { name: 'Rex', categoryId: 1 })
        assert.equal(plain.status, 201)
        assert.equal(plain.headers.get('idempotent-replayed'), null)
        assert.equal(await count(handler), 2)
      }),
    )

    it(
      '50 concurrent creates with one key and payload make one pet, and every answer is it',
      on(async (handler) => {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => post(handler, { name: 'Crowd', categoryId: 2 }, 'crowd')),
        )
        const bodies = await Promise.all(answers.map((answer) => answer.text()))
        assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([201]), bodies.join('\n'))
        assert.equal(new Set(bodies).size, 1, 'every answer is the one pet')
        assert.equal(answers.filter((answer) => answer.headers.get('idempotent-replayed') === null).length, 1)
        assert.equal(await count(handler), 1)
      }),
    )

    it(
      'the same key with another payload is a 422 of its own code, and creates nothing',
      on(async (handler) => {
        assert.equal((await post(handler, { name: 'Rex', categoryId: 1 }, 'taken')).status, 201)
        const other = await post(handler, { name: 'Tom', categoryId: 1 }, 'taken')
        assert.equal(other.status, 422)
        const error = (await other.json()) as { code: string; status: number; message: string }
        assert.equal(error.code, 'idempotency_key_reused')
        assert.equal(error.status, 422)
        assert.equal(await count(handler), 1)
      }),
    )

    it(
      'one key sent with two API keys makes two pets',
      on(async (handler) => {
        const one = await post(handler, { name: 'Rex', categoryId: 1 }, 'shared', {}, 'first-key')
        const two = await post(handler, { name: 'Rex', categoryId: 1 }, 'shared', {}, 'second-key')
        assert.equal(one.status, 201)
        assert.equal(two.status, 201)
        assert.equal(two.headers.get('idempotent-replayed'), null)
        assert.notEqual(one.headers.get('location'), two.headers.get('location'))
        assert.equal(await count(handler), 2)
      }),
    )

    it(
      'an after-commit fault, then a retry: one pet, the retry a replay',
      on(async (handler) => {
        const lost = await post(handler, { name: 'Ann', categoryId: 1 }, 'lost', { prefer: 'fault=after-commit' })
        assert.equal(lost.status, 503)
        assert.equal(lost.headers.get('petstore-fault'), 'after-commit')
        const retry = await post(handler, { name: 'Ann', categoryId: 1 }, 'lost')
        assert.equal(retry.status, 201)
        assert.equal(retry.headers.get('idempotent-replayed'), 'true')
        assert.equal(((await retry.json()) as { name: string }).name, 'Ann')
        assert.equal(await count(handler), 1)
      }),
    )

    it(
      'an expired key creates again, and is then the new pet’s',
      on(
        async (handler) => {
          const first = await post(handler, { name: 'Old', categoryId: 1 }, 'short')
          await sleep(80)
          const again = await post(handler, { name: 'New', categoryId: 1 }, 'short')
          assert.equal(again.status, 201)
          assert.equal(again.headers.get('idempotent-replayed'), null)
          assert.notEqual(again.headers.get('location'), first.headers.get('location'))
          assert.equal(await count(handler), 2)
        },
        { idempotencyTtl: 50 },
      ),
    )

    it(
      'bad keys are a 400 each, saying why, and create nothing',
      on(async (handler) => {
        const cases: Array<[string, string, RegExp]> = [
          ['empty', '', /empty/],
          ['256 characters', 'k'.repeat(256), /256 characters long; at most 255/],
          ['a control character', 'ab\u0001c', /control character/],
          ['a tab', 'ab\tc', /control character/],
          ['given twice', 'one, two', /more than once/],
          ['given twice, quoted', '"one", "one"', /more than once/],
          ['beyond ASCII', 'clé', /beyond ASCII/],
          ['an open string', '"abc', /closing quote/],
        ]
        for (const [what, key, message] of cases) {
          if (rawKeysLost !== undefined && (key === '' || key.includes('\u0001'))) continue
          const answer = await post(handler, { name: 'Rex', categoryId: 1 }, key)
          assert.equal(answer.status, 400, what)
          const error = (await answer.json()) as { code: string; message: string }
          assert.equal(error.code, 'invalid_idempotency_key', what)
          assert.match(error.message, message, what)
        }
        // Two fields, as a client sends them: joined into one value by the time the handler reads it.
        const headers = new Headers({ authorization: 'Bearer first-key', 'content-type': 'application/json' })
        headers.append('idempotency-key', 'same')
        headers.append('idempotency-key', 'same')
        const twice = await handler(
          new Request('http://petstore.test/v1/pets', {
            method: 'POST',
            headers,
            body: '{"name":"Rex","categoryId":1}',
          }),
        )
        assert.equal(twice.status, 400)
        assert.equal(await count(handler), 0)
        assert.equal((await post(handler, { name: 'Rex', categoryId: 1 }, 'k'.repeat(255))).status, 201)
      }),
    )

    it(
      'an invalid payload with a key is a 400 and stores no key',
      on(async (handler) => {
        assert.equal((await post(handler, { name: '', categoryId: 1 }, 'fixme')).status, 400)
        const fixed = await post(handler, { name: 'Fixed', categoryId: 1 }, 'fixme')
        assert.equal(fixed.status, 201)
        assert.equal(fixed.headers.get('idempotent-replayed'), null)
      }),
    )
  })
}
