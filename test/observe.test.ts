/** The `onResponse` hook and request ids, on both paths: a fetch handler, and the Node adapter driving the engine. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { serve } from '../adapters/node/index.js'
import type { ResponseInfo } from '../src/http/observe.js'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { call, KEY } from './helpers/client.js'

const GENERATED = /^[0-9a-z]{8}-[0-9a-z]+$/

/** A handler whose `onResponse` calls land in `seen`. */
function observed(store: PetStore = memoryStore(), extra = {}) {
  const seen: ResponseInfo[] = []
  const handler = createPetstore({ store, keys: [KEY], onResponse: (info) => void seen.push(info), ...extra })
  return { handler, seen }
}

/** Sends the same requests through a fetch handler or a real socket, and returns what each answer said. */
async function traffic(send: (path: string, init?: RequestInit) => Promise<Response>) {
  const auth = { authorization: `Bearer ${KEY}` }
  const answers: Response[] = []
  const created = await send('/v1/pets', {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'x-request-id': 'client-chosen.id_1' },
    body: JSON.stringify({ name: 'Rex ✓', categoryId: 1 }),
  })
  answers.push(created)
  const { id } = (await created.json()) as { id: number }
  for (const [path, init] of [
    [`/v1/pets/${id}`, { headers: auth }],
    ['/v1/pets?limit=1&cursor=abc', { headers: { ...auth, 'x-request-id': 'x'.repeat(129) } }],
    ['/v1/pets/', { headers: { ...auth, 'x-request-id': 'has space' } }],
    ['/v1/pets', {}],
    ['/v1/nowhere', { headers: auth }],
    ['/v1/pets', { method: 'DELETE', headers: auth }],
    [`/v1/pets/${id}`, { method: 'HEAD', headers: auth }],
    ['/v1/openapi.json', {}],
  ] as const) {
    const answer = await send(path, init)
    await answer.arrayBuffer()
    answers.push(answer)
  }
  return answers
}

function check(answers: Response[], seen: ResponseInfo[]) {
  assert.equal(seen.length, answers.length)
  const ids = answers.map((answer) => answer.headers.get('x-request-id'))
  assert.deepEqual(
    seen.map((info) => info.requestId),
    ids,
  )
  assert.equal(ids[0], 'client-chosen.id_1', 'a sane id is kept')
  for (const index of [1, 2, 3, 4]) assert.match(ids[index] ?? '', GENERATED, 'a missing or insane id is replaced')
  assert.equal(new Set(ids).size, ids.length, 'ids are unique')
  assert.deepEqual(
    seen.map(({ method, route, status, code, url }) => [method, route, status, code, url]),
    [
      ['POST', '/v1/pets', 201, null, '/v1/pets'],
      ['GET', '/v1/pets/{petId}', 200, null, seen[1]?.url],
      ['GET', '/v1/pets', 400, 'validation_error', '/v1/pets?limit=1&cursor=abc'],
      ['GET', '/v1/pets', 200, null, '/v1/pets/'],
      ['GET', '/v1/pets', 401, 'unauthorized', '/v1/pets'],
      ['GET', null, 404, 'not_found', '/v1/nowhere'],
      ['DELETE', '/v1/pets', 405, 'method_not_allowed', '/v1/pets'],
      ['HEAD', '/v1/pets/{petId}', 200, null, seen[7]?.url],
      ['GET', '/v1/openapi.json', 200, null, '/v1/openapi.json'],
    ],
  )
  for (const [index, info] of seen.entries()) {
    const length = answers[index]?.headers.get('content-length')
    if (length !== null && length !== undefined && info.method !== 'HEAD') assert.equal(info.bytes, Number(length))
    assert.ok(info.durationMs >= 0 && info.durationMs < 10_000)
    assert.doesNotMatch(JSON.stringify(info), new RegExp(KEY))
  }
  assert.equal(seen[7]?.bytes, 0, 'HEAD sends no body')
  assert.ok((seen[0]?.bytes ?? 0) > 0)
}

describe('onResponse and X-Request-Id', () => {
  it('tells every answer of a fetch handler, with route template, code, bytes and the id sent back', async () => {
    const { handler, seen } = observed()
    const answers = await traffic((path, init) => handler(new Request(`http://petstore.test${path}`, init)))
    check(answers, seen)
  })

  it('tells the same over a real socket, where the Node adapter drives the engine', async () => {
    const { handler, seen } = observed()
    const server = await serve({ handler, port: 0 })
    try {
      const answers = await traffic((path, init) => fetch(`http://127.0.0.1:${server.port}${path}`, init))
      check(answers, seen)
      // bytes are what went on the wire: a UTF-8 name counted in bytes, not characters.
      assert.equal(seen[0]?.bytes, Number(answers[0]?.headers.get('content-length')))
    } finally {
      await server.close()
    }
  })

  it('sends an id without the hook too, never in an Error body, and gives it to onError', async () => {
    const errors: Request[] = []
    const failing: PetStore = {
      create: async () => {
        throw new Error('boom')
      },
      get: async () => {
        throw new Error('boom')
      },
      list: async () => {
        throw new Error('boom')
      },
    }
    const handler = createPetstore({ store: failing, keys: [KEY], onError: (_, request) => void errors.push(request) })
    const answer = await call(handler, '/v1/pets', { headers: { 'x-request-id': 'trace-me' } })
    assert.equal(answer.status, 500)
    assert.equal(answer.headers.get('x-request-id'), 'trace-me')
    assert.doesNotMatch(answer.text, /trace-me/)
    assert.equal(errors[0]?.headers.get('x-request-id'), 'trace-me')
    assert.equal(errors[0]?.headers.get('authorization'), null)
    const generated = await call(handler, '/v1/pets/1')
    assert.match(generated.headers.get('x-request-id') ?? '', GENERATED)
    assert.equal(errors[1]?.headers.get('x-request-id'), generated.headers.get('x-request-id'))
  })

  it('exposes X-Request-Id to browsers when CORS is on', async () => {
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], cors: { origin: '*' } })
    const answer = await call(handler, '/v1/pets', { headers: { origin: 'https://app.example' } })
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/)
  })

  it('answers the same when the hook throws or rejects', async () => {
    for (const onResponse of [
      () => {
        throw new Error('hook')
      },
      async () => {
        throw new Error('hook')
      },
    ]) {
      const handler = createPetstore({ store: memoryStore(), keys: [KEY], onResponse })
      assert.equal((await call(handler, '/v1/pets')).status, 200)
    }
  })
})
