/**
 * The request journal in the library: `withJournal()` over a handler of
 * `createPetstore`, read over HTTP at `/__petstore/requests`, on the memory
 * store and on SQLite (the journal does not depend on the store), and under
 * `petstore-server/msw`. The binary's journal is in journal-binary.test.ts.
 *
 * Run: node --import tsx --test test/journal.test.ts
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { setupServer } from 'msw/node'
import { petstoreHandlers } from '../adapters/msw.js'
import { createPetstore, type FetchHandler, memoryStore, type PetStore } from '../src/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { Journal, type JournalEntry, type JournalPage, withFaults, withJournal } from '../src/testing.js'
import { sha256Hex } from '../src/util/sha256.js'

const KEY = 'journal-test-key-0123456789'
const AUTH = { authorization: `Bearer ${KEY}` }
const JSON_TYPE = { 'content-type': 'application/json' }
const ORIGIN = 'http://petstore.test'

const STORES: [string, () => PetStore][] = [
  ['memory', () => memoryStore()],
  ['sqlite', () => sqliteStore({ path: ':memory:' })],
]

/** A handler recording into `journal`, with `Prefer: fault=…` honoured. */
function journaled(makeStore: () => PetStore, journal: Journal, maxBodyBytes?: number): FetchHandler {
  const api = createPetstore({ store: makeStore(), keys: [KEY], maxBodyBytes })
  return withJournal(withFaults(api, { prefer: true }), journal)
}

const call = (handler: FetchHandler, path: string, init: RequestInit = {}) =>
  handler(new Request(`${ORIGIN}${path}`, { ...init, headers: { ...AUTH, ...(init.headers as object) } }))
const create = (handler: FetchHandler, body: unknown, headers: Record<string, string> = {}) =>
  call(handler, '/v1/pets', {
    method: 'POST',
    headers: { ...JSON_TYPE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
async function read(handler: FetchHandler, query = ''): Promise<JournalPage> {
  const answer = await call(handler, `/__petstore/requests${query}`)
  assert.equal(answer.status, 200, await answer.clone().text())
  return (await answer.json()) as JournalPage
}
const operations = (page: JournalPage) => page.requests.map((entry) => `${entry.operation ?? '-'} ${entry.status}`)

for (const [storeName, makeStore] of STORES) {
  describe(`the journal over HTTP, on ${storeName}`, () => {
    it('records each request with its fields, oldest first, and not its own reads', async () => {
      const handler = journaled(makeStore, new Journal())
      await call(handler, '/v1/pets?limit=2')
      const created = (await (await create(handler, { name: 'Rex', categoryId: 1 })).json()) as { id: number }
      await call(handler, `/v1/pets/${created.id}`, { headers: { 'x-trace': 'abc' } })
      await call(handler, '/v1/pets/999')
      await read(handler)
      const page = await read(handler)
      assert.equal(page.evicted, 0)
      assert.deepEqual(operations(page), ['listPets 200', 'createPet 201', 'getPet 200', 'getPet 404'])
      const [list, post, get] = page.requests as [JournalEntry, JournalEntry, JournalEntry]
      assert.equal(list.path, '/v1/pets?limit=2')
      assert.equal(list.method, 'GET')
      assert.equal(list.body, null)
      assert.equal(list.bodyTruncated, false)
      assert.ok(!Number.isNaN(Date.parse(list.time)))
      assert.ok(list.durationMs >= 0)
      assert.equal(post.body, '{"name":"Rex","categoryId":1}')
      assert.equal(post.bodyTruncated, false)
      assert.equal(post.petId, created.id)
      assert.equal(post.headers['content-type'], 'application/json')
      assert.equal(post.headers.authorization, '[redacted]')
      assert.equal(post.keyId, sha256Hex(KEY).slice(0, 8))
      assert.equal(get.headers['x-trace'], 'abc')
      assert.equal(get.petId, created.id)
      assert.equal(page.requests[3]?.petId, undefined)
      const ids = page.requests.map((entry) => entry.id)
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      )
      assert.equal(new Set(ids).size, ids.length)
    })

    it('filters by operation, method, status, path, since, limit and header; counts without bodies', async () => {
      const handler = journaled(makeStore, new Journal())
      await create(handler, { name: 'A', categoryId: 1 }, { 'idempotency-key': 'one' })
      await create(handler, { name: '', categoryId: 1 }, { 'idempotency-key': 'two' })
      await call(handler, '/v1/pets?status=sold')
      await call(handler, '/v1/pets/1', { method: 'HEAD' })
      await create(handler, { name: 'B', categoryId: 2 })
      const all = await read(handler)
      assert.deepEqual(operations(await read(handler, '?operation=createPet')), [
        'createPet 201',
        'createPet 400',
        'createPet 201',
      ])
      assert.deepEqual(operations(await read(handler, '?method=head')), ['getPet 200'])
      assert.deepEqual(operations(await read(handler, '?status=400')), ['createPet 400'])
      assert.deepEqual(operations(await read(handler, '?status=2xx&operation=createPet')), [
        'createPet 201',
        'createPet 201',
      ])
      assert.deepEqual(operations(await read(handler, `?path=${encodeURIComponent('/v1/pets?status=')}`)), [
        'listPets 200',
      ])
      assert.deepEqual(operations(await read(handler, `?since=${all.requests[2]?.id}`)), [
        'getPet 200',
        'createPet 201',
      ])
      assert.deepEqual(operations(await read(handler, '?limit=2')), ['createPet 201', 'createPet 400'])
      assert.deepEqual(operations(await read(handler, '?header=idempotency-key')), ['createPet 201', 'createPet 400'])
      assert.deepEqual(operations(await read(handler, '?header=Idempotency-Key:two')), ['createPet 400'])
      assert.deepEqual(operations(await read(handler, '?header=idempotency-key&header=x-none')), [])
      const count = await call(handler, '/__petstore/requests/count?operation=createPet&status=2xx')
      assert.deepEqual(await count.json(), { count: 2, evicted: 0 })
    })

    it('answers a bad filter with a 400 Error body', async () => {
      const handler = journaled(makeStore, new Journal())
      const bad = [
        ['?status=abc', 'status'],
        ['?operation=createPets', 'operation'],
        ['?method=FETCH', 'method'],
        ['?path=v1', 'path'],
        ['?since=-1', 'since'],
        ['?limit=0', 'limit'],
        ['?header=a%20b', 'header'],
        ['?limit=1&limit=2', 'limit'],
        ['?sort=id', 'sort'],
      ]
      for (const [query, name] of bad) {
        for (const path of ['/__petstore/requests', '/__petstore/requests/count']) {
          const answer = await call(handler, `${path}${query}`)
          assert.equal(answer.status, 400, `${path}${query}`)
          const body = (await answer.json()) as { code: string; status: number; message: string; details: unknown[] }
          assert.equal(body.code, 'validation_error')
          assert.equal(body.status, 400)
          assert.match(body.message, new RegExp(`^${name}: `))
          assert.deepEqual((body.details[0] as { path: string }).path, name)
        }
      }
    })

    it('clears on DELETE, and evicted starts again', async () => {
      const handler = journaled(makeStore, new Journal({ size: 2 }))
      for (let i = 0; i < 3; i++) await call(handler, '/v1/pets')
      assert.equal((await read(handler)).evicted, 1)
      const cleared = await call(handler, '/__petstore/requests', { method: 'DELETE' })
      assert.equal(cleared.status, 204)
      assert.deepEqual(await read(handler), { requests: [], evicted: 0 })
      await call(handler, '/v1/pets')
      assert.deepEqual(operations(await read(handler)), ['listPets 200'])
    })

    it('keeps the newest N: 8 requests into 5 leave 5, and evicted 3', async () => {
      const handler = journaled(makeStore, new Journal({ size: 5 }))
      for (let i = 0; i < 8; i++) await call(handler, `/v1/pets?limit=${i + 1}`)
      const page = await read(handler)
      assert.equal(page.evicted, 3)
      assert.deepEqual(
        page.requests.map((entry) => entry.path),
        [4, 5, 6, 7, 8].map((limit) => `/v1/pets?limit=${limit}`),
      )
    })

    it('records a 401, and no form of the key appears anywhere in its JSON', async () => {
      const handler = journaled(makeStore, new Journal())
      await create(handler, { name: 'Rex', categoryId: 1 })
      const refused = await handler(
        new Request(`${ORIGIN}/v1/pets`, {
          method: 'POST',
          headers: { authorization: 'Bearer not-the-key-9876', ...JSON_TYPE },
          body: '{"name":"Rex","categoryId":1}',
        }),
      )
      assert.equal(refused.status, 401)
      await call(handler, '/v1/pets', { headers: { authorization: `bearer  ${KEY}` } })
      const text = await (await call(handler, '/__petstore/requests')).text()
      const page = JSON.parse(text) as JournalPage
      assert.deepEqual(operations(page), ['createPet 201', 'createPet 401', 'listPets 200'])
      // Refused before it was read: the body is not what the client sent.
      assert.equal(page.requests[1]?.body, '')
      assert.equal(page.requests[1]?.bodyTruncated, true)
      assert.equal(page.requests[1]?.keyId, sha256Hex('not-the-key-9876').slice(0, 8))
      for (const secret of [KEY, 'not-the-key-9876']) {
        for (const form of [
          secret,
          Buffer.from(secret).toString('base64'),
          Buffer.from(secret).toString('base64url'),
          Buffer.from(`Bearer ${secret}`).toString('base64'),
          createHash('sha256').update(secret).digest('hex'),
          createHash('sha256').update(secret).digest('base64'),
        ]) {
          assert.ok(!text.includes(form), `the journal holds ${form}`)
        }
        // Nor a part of it: no 8 characters of the key in a row.
        for (let i = 0; i + 8 <= secret.length; i++) assert.ok(!text.includes(secret.slice(i, i + 8)))
      }
    })

    it('cuts a 1 MiB body at the cap and marks it; marks a body refused unread (413)', async () => {
      const journal = new Journal({ bodyBytes: 64 * 1024 })
      const handler = journaled(makeStore, journal, 2 * 1024 * 1024)
      const name = 'é'.repeat(512 * 1024)
      const big = JSON.stringify({ name, categoryId: 1 })
      assert.ok(Buffer.byteLength(big) > 1024 * 1024)
      const answer = await create(handler, big)
      assert.equal(answer.status, 400) // a name that long is refused, once read whole
      const small = journaled(makeStore, journal)
      const tooLarge = await create(small, big)
      assert.equal(tooLarge.status, 413)
      const [cut, unread] = journal.requests().requests as [JournalEntry, JournalEntry]
      assert.equal(cut.bodyTruncated, true)
      // Cut at a character's end: 2-byte characters after the 9 bytes of `{"name":"` stop 1 byte short.
      assert.equal(Buffer.byteLength(cut.body ?? ''), 64 * 1024 - 1)
      assert.ok(big.startsWith(cut.body ?? 'none'))
      assert.equal(unread.status, 413)
      assert.equal(unread.body, '')
      assert.equal(unread.bodyTruncated, true)
    })

    it('shows a create retried after an after-commit fault as two creates', async () => {
      const handler = journaled(makeStore, new Journal())
      const body = { name: 'Once', categoryId: 7 }
      const first = await create(handler, body, { prefer: 'fault=after-commit', 'idempotency-key': 'k1' })
      assert.equal(first.status, 503)
      const second = await create(handler, body, { 'idempotency-key': 'k1' })
      assert.equal(second.status, 201)
      const creates = (await read(handler, '?operation=createPet')).requests
      assert.equal(creates.length, 2)
      assert.deepEqual(
        creates.map((entry) => [entry.status, entry.fault, entry.headers['idempotency-key']]),
        [
          [503, 'after-commit', 'k1'],
          [201, undefined, 'k1'],
        ],
      )
      assert.equal(creates[0]?.body, creates[1]?.body)
    })
  })
}

describe('the journal, off and in between', () => {
  it('is a 404 where no journal wraps the handler', async () => {
    const handler = createPetstore({ store: memoryStore(), keys: [KEY] })
    for (const path of ['/__petstore/requests', '/__petstore/requests/count']) {
      assert.equal((await call(handler, path)).status, 404)
    }
  })

  it('asks a key to read or clear, records nothing outside the API, and leaves answers as they were', async () => {
    const journal = new Journal()
    const handler = withJournal(createPetstore({ store: memoryStore(), keys: [KEY] }), journal)
    const plain = createPetstore({ store: memoryStore(), keys: [KEY] })
    assert.equal((await handler(new Request(`${ORIGIN}/__petstore/requests`))).status, 401)
    assert.equal((await handler(new Request(`${ORIGIN}/__petstore/requests`, { method: 'DELETE' }))).status, 401)
    assert.equal((await call(handler, '/elsewhere')).status, 404)
    for (const body of ['{"name":"a",', '\u00ff'.repeat(10), '{"name":"Rex","categoryId":1}']) {
      const [journaled, bare] = await Promise.all([create(handler, body), create(plain, body)])
      assert.equal(journaled.status, bare.status)
      assert.equal(await journaled.text(), await bare.text())
    }
    assert.deepEqual(
      journal.requests().requests.map((entry) => entry.status),
      [400, 400, 201],
    )
  })

  it('serves under a prefix, as a namespace would', async () => {
    const journal = new Journal()
    const api = createPetstore({ store: memoryStore(), keys: [KEY], basePath: '/ns/a/v1' })
    const handler = withJournal(api, journal, { prefix: '/ns/a' })
    await call(handler, '/ns/a/v1/pets')
    assert.equal((await call(handler, '/__petstore/requests')).status, 404)
    const page = (await (await call(handler, '/ns/a/__petstore/requests')).json()) as JournalPage
    assert.deepEqual(operations(page), ['listPets 200'])
  })

  it('refuses a handler it cannot wrap, and sizes out of range', () => {
    assert.throws(() => withJournal(async () => new Response(''), new Journal()), TypeError)
    assert.throws(() => new Journal({ size: 0 }), /size must be a whole number from 1 to 100000/)
    assert.throws(() => new Journal().requests('status=x'), /status: must be a status/)
  })
})

describe('the journal under petstore-server/msw', () => {
  const journal = new Journal()
  const server = setupServer(...petstoreHandlers({ baseUrl: 'https://api.example.test/v1', keys: [KEY], journal }))
  server.listen({ onUnhandledRequest: 'error' })
  after(() => server.close())

  it('records what the mocked client sent, read in the test or over HTTP', async () => {
    const created = await fetch('https://api.example.test/v1/pets', {
      method: 'POST',
      headers: { ...AUTH, ...JSON_TYPE },
      body: '{"name":"Rex","categoryId":1}',
    })
    assert.equal(created.status, 201)
    assert.deepEqual(
      journal.requests({ operation: 'createPet' }).requests.map((entry) => entry.body),
      ['{"name":"Rex","categoryId":1}'],
    )
    const page = await fetch('https://api.example.test/__petstore/requests/count?operation=createPet', {
      headers: AUTH,
    })
    assert.deepEqual(await page.json(), { count: 1, evicted: 0 })
  })
})

it("the key's label is SHA-256, as node:crypto computes it", () => {
  for (const text of ['', 'abc', 'k'.repeat(55), 'k'.repeat(56), 'k'.repeat(64), 'x'.repeat(1000), 'clé-€-😀']) {
    assert.equal(sha256Hex(text), createHash('sha256').update(text).digest('hex'), JSON.stringify(text.slice(0, 20)))
  }
})
