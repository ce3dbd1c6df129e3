/**
 * The properties the fuzz checks, on a handler over an instrumented store:
 * every request is answered (never thrown), with no 5xx but a deliberate
 * 503, by a valid Pet, Pet array or OpenAPI document, or by a spec-shaped
 * Error whose `status` is the HTTP status, with the right headers; requests
 * without a valid key never reach the store; no key is ever echoed or
 * reported; and a pet created is then retrievable.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { inspect } from 'node:util'
import fc from 'fast-check'
import * as v from 'valibot'
import { encodeCursor } from '../../bench/cursor.js'
import { int64Of } from '../../src/api/schemas.js'
import {
  createPetstore,
  ErrorSchema,
  type FetchHandler,
  memoryStore,
  openApiDocument,
  PetSchema,
  type PetStore,
  PetstoreError,
} from '../../src/index.js'
import { sqliteStore } from '../../src/store/sql/sqlite.js'
import { parseExactJson } from '../helpers/json-page.js'
import {
  type BodyCase,
  CURSOR_SECRET,
  DIGEST_KEY,
  describeCase,
  KEY,
  MAX_BODY_BYTES,
  type RequestCase,
  requestCase,
  validPet,
} from './arbitraries.js'

export type StoreKind = 'memory' | 'sqlite'

/** What one case did to the store and to `onError`. */
interface Observed {
  storeCalls: number
  outage: boolean
  reported: Array<{ error: unknown; request: Request }>
}

/** A handler under test, the real store behind it, and what the fuzz saw. */
export interface Target {
  kind: StoreKind
  handler: FetchHandler
  store: PetStore
  observed: Observed
  /** Answers seen, by status. */
  statuses: Map<number, number>
  close(): Promise<void>
}

const BASE = '/v1'
const ORIGIN = 'http://petstore.test'
const DOCUMENT = JSON.stringify(openApiDocument(BASE))
const StrictPet = v.strictObject(PetSchema.entries)
const StrictError = v.strictObject({
  ...ErrorSchema.entries,
  details: v.optional(v.array(v.strictObject({ path: v.string(), message: v.string() }))),
})
/** Every `code` the API answers with, and its status. */
const CODES: Record<string, number> = {
  // Authorization given twice, or a path the URL parser would rewrite (%2f, %5c: the Request resolved the rest).
  bad_request: 400,
  validation_error: 400,
  invalid_json: 400,
  aborted: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal_error: 500,
  unavailable: 503,
}
const SECRETS = [KEY, DIGEST_KEY]
/** A handler call slower than this is a bug (a regex that backtracks, a loop over the input). */
const SLOW_MS = 1_500

/** Counts store calls, and fails every call while the case asks for an outage. */
function instrument(store: PetStore, observed: Observed): PetStore {
  const call = <T>(work: () => Promise<T>): Promise<T> => {
    observed.storeCalls++
    if (observed.outage) return Promise.reject(PetstoreError.unavailable(new Error('fuzz: simulated outage')))
    return work()
  }
  return {
    create: (pet) => call(() => store.create(pet)),
    get: (id) => call(() => store.get(id)),
    list: (query) => call(() => store.list(query)),
  }
}

/**
 * A handler over a fresh store of `kind` (SQLite in a file under `dir`),
 * accepting {@link KEY} in clear and {@link DIGEST_KEY} by its digest.
 */
export async function openTarget(kind: StoreKind, dir: string): Promise<Target> {
  const store = kind === 'memory' ? memoryStore() : sqliteStore({ path: join(dir, `fuzz-${Date.now()}.db`) })
  for (let i = 1; i <= 5; i++) await store.create({ name: `seed ${i}`, categoryId: i, status: 'available' })
  const observed: Observed = { storeCalls: 0, outage: false, reported: [] }
  const digest = createHash('sha256').update(DIGEST_KEY).digest('hex')
  const handler = createPetstore({
    store: instrument(store, observed),
    keys: [KEY, `sha256:${digest}`],
    maxBodyBytes: MAX_BODY_BYTES,
    cursorSecret: CURSOR_SECRET,
    onError: (error, request) => observed.reported.push({ error, request }),
  })
  return { kind, handler, store, observed, statuses: new Map(), close: async () => store.close?.() }
}

function bodyInit(body: BodyCase): BodyInit {
  const { bytes, transport, chunkSize } = body
  if (transport === 'string') return new TextDecoder().decode(bytes)
  if (transport === 'bytes') return bytes as Uint8Array<ArrayBuffer>
  let offset = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (transport === 'broken' && offset > 0) return controller.error(new Error('fuzz: upload broke off'))
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + chunkSize))
      offset += chunkSize
    },
  })
}

/** The `Request` of a case. */
export function toRequest(c: RequestCase): Request {
  const headers = new Headers()
  for (const [name, value] of c.headers) headers.append(name, value)
  const init: RequestInit & { duplex?: 'half' } = { method: c.method, headers }
  if (c.aborted) init.signal = AbortSignal.abort()
  if (c.body) Object.assign(init, { body: bodyInit(c.body), duplex: 'half' })
  return new Request(`${ORIGIN}${c.target.startsWith('/') ? '' : '/'}${c.target}`, init)
}

/** Whether `request` carries one of the keys (the spec: `Bearer`, any case, then the key). */
function isAuthorized(request: Request): boolean {
  const token = /^bearer +(\S+) *$/i.exec(request.headers.get('authorization') ?? '')?.[1]
  return token !== undefined && SECRETS.includes(token)
}

const auth = { authorization: `Bearer ${KEY}` }

/** The body a created pet must have come from: what the handler was sent, decoded. */
function sentPet(c: RequestCase): Record<string, unknown> {
  // A string body was sent decoded without `fatal`, as `toRequest` did.
  const decoder = new TextDecoder('utf-8', { fatal: c.body?.transport !== 'string' })
  const text = decoder.decode(c.body?.bytes)
  const input = JSON.parse(text)
  const pet: Record<string, unknown> = { name: input.name, categoryId: input.categoryId }
  if (input.status !== undefined) pet.status = input.status
  // As the wire has it: `-0` is sent back as `0`.
  return JSON.parse(JSON.stringify(pet))
}

function assertNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `a key appears in ${where}`)
}

/** Checks a Pet array answered by `GET /pets`, and follows its `next` link. */
async function checkPage(target: Target, url: URL, pets: unknown[], headers: Headers): Promise<void> {
  let previous = 0
  const statuses = url.searchParams.getAll('status')
  const limits = url.searchParams.getAll('limit')
  for (const pet of pets) {
    const checked = v.parse(StrictPet, pet)
    assert.ok(checked.id > previous, 'pets are in ascending id order')
    if (statuses.length === 1) assert.equal(checked.status, statuses[0])
    previous = checked.id
  }
  assert.ok(pets.length <= (limits.length === 1 ? Number(limits[0]) : 20), 'no more pets than the limit')
  const next = /<([^>]+)>; rel="next"/.exec(headers.get('link') ?? '')?.[1]
  if (next === undefined) return
  assert.ok(next.startsWith(`${BASE}/pets?`), `next link ${next}`)
  const answer = await target.handler(new Request(`${ORIGIN}${next}`, { headers: auth }))
  assert.equal(answer.status, 200, `following ${next}`)
  const page = (await answer.json()) as Array<{ id: number }>
  assert.ok(page.length > 0 && (page[0]?.id ?? 0) > previous, 'the next page starts after this one')
}

/** Sends one case and checks every property of its answer. */
export async function checkCase(target: Target, c: RequestCase): Promise<void> {
  const { observed } = target
  const request = toRequest(c)
  const authorized = isAuthorized(request)
  const url = new URL(request.url)
  observed.storeCalls = 0
  observed.reported = []
  observed.outage = c.outage
  const started = performance.now()
  let response: Response
  try {
    response = await target.handler(request)
  } finally {
    observed.outage = false
  }
  const elapsed = performance.now() - started
  const text = await response.text()
  const { status, headers } = response
  target.statuses.set(status, (target.statuses.get(status) ?? 0) + 1)
  const context = `${status} ${text.slice(0, 300)}`

  assert.ok(elapsed < SLOW_MS, `answered in ${Math.round(elapsed)} ms`)
  if (status >= 500) {
    assert.ok(status === 503 && c.outage && observed.storeCalls > 0, `no 5xx but a deliberate 503: ${context}`)
  }
  assert.equal(observed.reported.length, status >= 500 ? 1 : 0, `onError is told of 5xx only: ${context}`)
  if (c.aborted) assert.equal(observed.storeCalls, 0, 'an aborted request reached the store')
  if (!authorized) {
    assert.equal(observed.storeCalls, 0, 'a request without a valid key reached the store')
    // 400 only as bad_request: Authorization given twice, or a path refused before the key is asked for.
    const refused = status === 400 && (request.method === 'HEAD' || text.startsWith('{"code":"bad_request"'))
    assert.ok([200, 401, 404, 405].includes(status) || refused, `unauthenticated: ${context}`)
  }

  assert.equal(headers.get('content-type'), 'application/json', context)
  assert.equal(headers.get('x-content-type-options'), 'nosniff')
  assert.equal(headers.get('cache-control'), 'no-store')
  assertNoSecret(text, 'a response body')
  for (const [name, value] of headers) assertNoSecret(value, `the ${name} header`)
  for (const { error, request: reported } of observed.reported) {
    assertNoSecret(inspect(error, { depth: Number.POSITIVE_INFINITY }), 'what onError was told')
    assert.equal(reported.headers.get('authorization'), null, 'onError gets no Authorization')
  }

  if (request.method === 'HEAD') return assert.equal(text, '', 'HEAD has no body')
  // Exact: a categoryId beyond 2^53 is answered digit for digit, and Pet's schema wants it a bigint.
  const body = parseExactJson(text)

  if (status >= 400) {
    const error = v.parse(StrictError, body)
    assert.equal(error.status, status, 'the Error status is the HTTP status')
    assert.equal(CODES[error.code], status, `code ${error.code} goes with ${status}`)
    assert.ok(error.message.length > 0)
    if (status === 401) assert.match(headers.get('www-authenticate') ?? '', /^Bearer realm="petstore"/)
    if (status === 405) assert.ok(headers.get('allow'))
    return
  }

  assert.ok(status === 200 || status === 201, context)
  if (status === 201) {
    const pet = v.parse(StrictPet, body)
    assert.equal(request.method, 'POST')
    assert.equal(headers.get('location'), `${BASE}/pets/${pet.id}`)
    const { id, ...fields } = pet
    // Compared as JSON.parse sees both (the exact digits are proven by the API suite's int64 round trip).
    assert.deepEqual(
      { ...fields, categoryId: Number(fields.categoryId) },
      sentPet(c),
      'the pet created is the pet sent',
    )
    const again = await target.handler(new Request(`${ORIGIN}${BASE}/pets/${id}`, { headers: auth }))
    assert.equal(again.status, 200, 'a created pet is retrievable')
    assert.equal(await again.text(), text)
  } else if (Array.isArray(body)) {
    await checkPage(target, url, body, headers)
  } else if ('openapi' in body) {
    assert.equal(text, DOCUMENT, 'the OpenAPI document')
  } else {
    const pet = v.parse(StrictPet, body)
    // As the wire has it (a stored `-0` is sent as `0`).
    const stored = await target.store.get(pet.id)
    assert.deepEqual(stored && { ...stored, categoryId: int64Of(String(stored.categoryId)) }, pet, 'the pet as stored')
  }
}

/** A valid pet is created (201), then read back by id and by a page that starts at it. */
export async function checkCreate(target: Target, pet: Record<string, unknown>): Promise<void> {
  const created = await target.handler(
    new Request(`${ORIGIN}${BASE}/pets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(pet),
    }),
  )
  const body = await created.json()
  assert.equal(created.status, 201, JSON.stringify(body))
  assert.deepEqual(body, { id: body.id, ...pet })
  const read = await target.handler(new Request(`${ORIGIN}${created.headers.get('location')}`, { headers: auth }))
  assert.equal(read.status, 200)
  assert.deepEqual(await read.json(), body)
  const page = await target.handler(
    new Request(`${ORIGIN}${BASE}/pets?limit=1&cursor=${encodeCursor(body.id - 1, undefined, CURSOR_SECRET)}`, {
      headers: auth,
    }),
  )
  assert.deepEqual(await page.json(), [body])
}

/** fast-check properties over a target: hostile requests, and valid creates. */
export function properties(target: Target) {
  const printable = requestCase.map((c) => Object.assign(c, { [fc.toStringMethod]: () => describeCase(c) }))
  return {
    requests: fc.asyncProperty(printable, (c) => checkCase(target, c)),
    creates: fc.asyncProperty(validPet, (pet) => checkCreate(target, pet)),
  }
}
