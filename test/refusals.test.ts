/**
 * The refusals the API makes itself, byte for byte: status, the headers that
 * say what to do, and the whole Error body. The engine returns them as
 * answers rather than throwing them (src/http/errors.ts, `ErrorAnswer`), so each is
 * pinned here to what a thrown PetstoreError of the same status, code,
 * message and details gave, key order included. Over the fetch handler and
 * over a real socket (the Node adapter), the two ways a request comes in.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { gzipSync } from 'node:zlib'
import { type RunningServer, serve } from '../adapters/node/index.js'
import { createPetstore, memoryStore, PetstoreError } from '../src/index.js'
import { AUTH, call, KEY } from './helpers/client.js'

const json = { 'content-type': 'application/json' }

interface Case {
  name: string
  path: string
  init?: RequestInit
  status: number
  body: string
  /** Headers beyond content-type that the refusal carries. */
  headers?: Record<string, string>
}

const invalid = (path: string, message: string) =>
  JSON.stringify({
    code: 'validation_error',
    message: `${path}: ${message}`,
    status: 400,
    details: [{ path, message }],
  })

const BODY_REQUIRED = JSON.stringify({
  code: 'validation_error',
  message: 'body: is required (a JSON object with name and categoryId)',
  status: 400,
  details: [{ path: 'body', message: 'is required' }],
})

const CASES: Case[] = [
  {
    name: 'a pet that is not there',
    path: '/v1/pets/9007199254740991',
    status: 404,
    body: '{"code":"not_found","message":"No pet with id 9007199254740991","status":404}',
    headers: { deprecation: '@1795219200' },
  },
  {
    name: 'a pet id that is no integer',
    path: '/v1/pets/abc',
    status: 400,
    body: invalid('petId', 'must be a decimal integer'),
  },
  {
    name: 'a limit out of range',
    path: '/v1/pets?limit=0',
    status: 400,
    body: invalid('limit', 'must be between 1 and 100'),
  },
  {
    name: 'a limit and a status both wrong, in one answer',
    path: '/v1/pets?limit=x&status=lost',
    status: 400,
    body: JSON.stringify({
      code: 'validation_error',
      message: 'limit: must be a decimal integer; status: must be one of available, pending, sold',
      status: 400,
      details: [
        { path: 'limit', message: 'must be a decimal integer' },
        { path: 'status', message: 'must be one of available, pending, sold' },
      ],
    }),
  },
  {
    name: 'a parameter given twice',
    path: '/v1/pets?limit=1&limit=2',
    status: 400,
    body: invalid('limit', 'must be given at most once'),
  },
  {
    name: 'a cursor this server did not issue',
    path: '/v1/pets?cursor=5.AAAAAAAAAAAAAAAA',
    status: 400,
    body: invalid('cursor', 'is not a cursor this server issued for this query'),
  },
  {
    name: 'a create that is not JSON',
    path: '/v1/pets',
    init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'Rex' },
    status: 415,
    body: '{"code":"unsupported_media_type","message":"Request body must be application/json","status":415}',
  },
  {
    name: 'a create declared larger than the limit',
    path: '/v1/pets',
    init: { method: 'POST', headers: { ...json, 'content-length': '200' }, body: `{"name":"${'x'.repeat(189)}"}` },
    status: 413,
    body: '{"code":"payload_too_large","message":"Request body is larger than 100 bytes","status":413}',
  },
  {
    name: 'a create without a body',
    path: '/v1/pets',
    init: { method: 'POST', headers: { ...json, 'content-length': '0' } },
    status: 400,
    body: BODY_REQUIRED,
  },
  {
    name: 'a create whose body is blank',
    path: '/v1/pets',
    init: { method: 'POST', headers: json, body: '  \n' },
    status: 400,
    body: BODY_REQUIRED,
  },
  {
    name: 'a create whose body is compressed (Content-Encoding)',
    path: '/v1/pets',
    init: {
      method: 'POST',
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipSync('{"name":"a","categoryId":1}'),
    },
    status: 415,
    body: '{"code":"unsupported_media_type","message":"Content-Encoding gzip is not supported: send the body unencoded","status":415}',
    headers: { 'accept-encoding': 'identity' },
  },
  {
    name: 'a create in another charset than UTF-8',
    path: '/v1/pets',
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=ISO-8859-1' },
      body: '{"name":"a","categoryId":1}',
    },
    status: 415,
    body: '{"code":"unsupported_media_type","message":"Request body must be JSON in UTF-8, got charset=iso-8859-1","status":415}',
  },
  {
    name: 'a create whose body is not JSON',
    path: '/v1/pets',
    init: { method: 'POST', headers: json, body: '{"name":' },
    status: 400,
    body: '{"code":"invalid_json","message":"Request body is not valid JSON","status":400}',
  },
  {
    name: 'a create the validation refuses',
    path: '/v1/pets',
    init: { method: 'POST', headers: json, body: '{"name":"","categoryId":7}' },
    status: 400,
    body: invalid('name', 'must be 1 to 255 characters long'),
  },
  {
    name: 'a create whose body is an array',
    path: '/v1/pets',
    init: { method: 'POST', headers: json, body: '[]' },
    status: 400,
    body: invalid('body', 'must be a JSON object'),
  },
  {
    name: 'a method the path does not take',
    path: '/v1/pets',
    init: { method: 'DELETE' },
    status: 405,
    body: '{"code":"method_not_allowed","message":"Method not allowed; use GET, HEAD, POST","status":405}',
    headers: { allow: 'GET, HEAD, POST' },
  },
  {
    name: 'a route that is not there',
    path: '/v1/owners',
    status: 404,
    body: '{"code":"not_found","message":"No such route","status":404}',
  },
]

const handler = () => createPetstore({ store: memoryStore(), keys: [KEY], maxBodyBytes: 100, cursorSecret: 's' })

function check(refusal: Case, status: number, headers: Headers, text: string): void {
  assert.equal(status, refusal.status, text)
  assert.equal(text, refusal.body)
  assert.equal(headers.get('content-type'), 'application/json')
  for (const [name, value] of Object.entries(refusal.headers ?? {})) assert.equal(headers.get(name), value, name)
}

describe('the API refuses with the same bytes it always did', () => {
  for (const refusal of CASES) {
    it(`over the fetch handler: ${refusal.name}`, async () => {
      const answer = await call(handler(), refusal.path, refusal.init)
      check(refusal, answer.status, answer.headers, answer.text)
    })
  }

  it('a create whose runtime hands it an empty stream, without a type or a length (a POST without a body): 400', async () => {
    const empty = () => new ReadableStream({ start: (controller) => controller.close() })
    const answer = await handler()(
      new Request('http://x/v1/pets', { method: 'POST', headers: AUTH, body: empty(), duplex: 'half' } as RequestInit),
    )
    assert.equal(answer.status, 400)
    assert.equal(await answer.text(), BODY_REQUIRED)
    // Bytes without a type: 415, as before.
    const typeless = new Request('http://x/v1/pets', {
      method: 'POST',
      headers: AUTH,
      body: new Uint8Array([123, 125]),
    })
    assert.equal((await handler()(typeless)).status, 415)
  })

  it('a HEAD refused carries the headers and no body', async () => {
    const answer = await call(handler(), '/v1/pets/12345', { method: 'HEAD' })
    assert.equal(answer.status, 404)
    assert.equal(answer.text, '')
    assert.equal(answer.headers.get('deprecation'), '@1795219200')
    const get = await call(handler(), '/v1/pets/12345')
    assert.equal(answer.headers.get('content-length'), String(Buffer.byteLength(get.text)))
  })

  it('a store that throws a PetstoreError of its own is still answered with it', async () => {
    const store = memoryStore()
    const refusing = createPetstore({
      store: {
        ...store,
        create: store.create.bind(store),
        list: store.list.bind(store),
        get: () => {
          throw new PetstoreError(404, 'not_found', 'Gone to the farm', { headers: { 'x-why': 'farm' } })
        },
      },
      keys: [KEY],
    })
    const answer = await call(refusing, '/v1/pets/1')
    assert.equal(answer.text, '{"code":"not_found","message":"Gone to the farm","status":404}')
    assert.equal(answer.headers.get('x-why'), 'farm')
  })
})

describe('the same refusals over a socket', () => {
  let server: RunningServer
  before(async () => {
    server = await serve({ handler: handler(), port: 0, hostname: '127.0.0.1' })
  })
  after(() => server.close())

  for (const refusal of CASES) {
    it(refusal.name, async () => {
      const headers = new Headers(refusal.init?.headers)
      headers.set('authorization', AUTH.authorization)
      const response = await fetch(`http://127.0.0.1:${server.port}${refusal.path}`, { ...refusal.init, headers })
      check(refusal, response.status, response.headers, await response.text())
    })
  }
})
