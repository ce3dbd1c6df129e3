// The API's rules as the library answers them (error bodies and messages, the
// bearer check, the cursor, query and body validation, headers), shared by
// the benchmark's competitors: node:http (baseline-server.ts), Fastify
// (fastify-server.ts) and Hono (hono-server.ts). One copy, so that when the
// library's answers change there is one place to follow them, and
// bench/parity.ts holds every competitor to it on each run.
//
// Framework-neutral: functions take strings and plain values and throw
// ApiError; each server turns that into its framework's response.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { withExactIntegers } from '../src/json-int64.js'
import { type Int64, isStatus, type NewPet, type Pet, type Status, type Store } from './baseline-stores.js'

export const BASE = '/v1'
export const MAX_BODY_BYTES = 100 * 1024
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
export const MAX_NAME_LENGTH = 255
const SAFE = Number.MAX_SAFE_INTEGER
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** The library's `details[].message` texts, by rule; Fastify maps its schema errors onto them. */
export const MESSAGES = {
  required: 'is required',
  once: 'must be given at most once',
  limitInteger: 'must be a decimal integer',
  limitRange: `must be between 1 and ${MAX_LIMIT}`,
  status: 'must be one of available, pending, sold',
  cursor: 'is not a cursor this server issued for this query',
  petIdInteger: 'must be a decimal integer',
  petIdRange: 'must be a 64-bit integer',
  body: 'must be a JSON object',
  nameType: 'must be a string',
  nameLength: `must be 1 to ${MAX_NAME_LENGTH} characters long`,
  nameBlank: 'must not be only whitespace',
  categoryInteger: 'must be an integer',
  categoryMin: `must be at least ${INT64_MIN}`,
  categoryMax: `must be at most ${INT64_MAX}`,
} as const

/** On every answer, errors included. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

/** On every answer of GET/HEAD /v1/pets/{petId}, errors included: the route is deprecated. */
export const DEPRECATION_HEADERS: Readonly<Record<string, string>> = {
  deprecation: '@1795219200',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: `<${BASE}/pets>; rel="successor-version"`,
}

export interface Detail {
  path: string
  message: string
}

export interface ErrorBody {
  code: string
  message: string
  status: number
  details?: Detail[]
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly details?: Detail[],
  ) {
    super(message)
  }

  /** The Error body; `details` only when there are some (JSON.stringify drops the undefined key). */
  body(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status, details: this.details }
  }
}

export function invalid(details: Detail[]): ApiError {
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
  return new ApiError(400, 'validation_error', message, {}, details)
}

export const notFound = (): ApiError => new ApiError(404, 'not_found', 'No such route')
export const notAllowed = (allow: string): ApiError =>
  new ApiError(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { allow })
export const internalError = (): ApiError =>
  new ApiError(500, 'internal_error', 'The server failed to answer this request')
export const unsupportedMediaType = (): ApiError =>
  new ApiError(415, 'unsupported_media_type', 'Request body must be application/json')
export const payloadTooLarge = (): ApiError =>
  new ApiError(413, 'payload_too_large', `Request body is larger than ${MAX_BODY_BYTES} bytes`)

/** True when `path` is under the base path, where a key is required. */
export function underBase(path: string): boolean {
  return path === BASE || path.startsWith(`${BASE}/`)
}

/**
 * Bearer key check on the Authorization header's value; throws a 401. Comparing
 * SHA-256 digests keeps it constant-time whatever the token's length.
 */
export function makeAuthCheck(key: string): (authorization: string | undefined) => void {
  const digest = (text: string) => createHash('sha256').update(text).digest()
  const expected = digest(key)
  const realm = 'Bearer realm="petstore"'
  const missing = new ApiError(401, 'unauthorized', 'Missing bearer API key: send Authorization: Bearer <key>', {
    'www-authenticate': realm,
  })
  const wrong = new ApiError(401, 'unauthorized', 'Invalid API key', {
    'www-authenticate': `${realm}, error="invalid_token"`,
  })
  return (authorization) => {
    const token = /^bearer +(\S+) *$/i.exec(authorization ?? '')?.[1]
    if (token === undefined) throw missing
    if (!timingSafeEqual(digest(token), expected)) throw wrong
  }
}

/**
 * The secret cursors are signed with: `PETSTORE_CURSOR_SECRET`, which bench/run.ts sets for every
 * server it starts, so that all of them issue the same `Link` as ours (src/cursor.ts).
 */
const CURSOR_SECRET = process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')

/**
 * The cursor ours issues (src/cursor.ts), computed synchronously with node:crypto:
 * `<id>.<first 12 bytes of HMAC-SHA-256(secret, "petstore-cursor-1|<status>|<id>") in base64url>`.
 */
export function encodeCursor(lastId: number, status?: string, secret = CURSOR_SECRET): string {
  const message = `petstore-cursor-1|${status ?? ''}|${lastId}`
  // Remembered as ours remembers them (src/cursor.ts), so that both do the same work per page.
  const known = secret === CURSOR_SECRET ? issued.get(message) : undefined
  if (known !== undefined) return known
  const tag = createHmac('sha256', secret).update(message).digest()
  const cursor = `${lastId}.${tag.subarray(0, 12).toString('base64url')}`
  if (secret === CURSOR_SECRET) {
    if (issued.size >= 4096) issued.clear()
    issued.set(message, cursor)
  }
  return cursor
}
const issued = new Map<string, string>()

/** The id after which the page starts; throws a 400 for a cursor this server did not issue for `status`. */
export function decodeCursor(raw: string | undefined, status?: string): number {
  if (raw === undefined) return 0
  const match = /^(0|[1-9]\d{0,15})\.[\w-]{16}$/.exec(raw)
  const id = match ? Number(match[1]) : Number.NaN
  const expected = Number.isSafeInteger(id) ? Buffer.from(encodeCursor(id, status)) : undefined
  if (expected === undefined || expected.length !== raw.length || !timingSafeEqual(expected, Buffer.from(raw))) {
    throw invalid([{ path: 'cursor', message: MESSAGES.cursor }])
  }
  return id
}

/** A query parameter as parsers give it: absent, once, or repeated. */
export type QueryValue = string | readonly string[] | undefined

const LIST_PARAMETERS = ['limit', 'status', 'cursor'] as const

/** Throws a 400 when `limit`, `status` or `cursor` is given more than once. */
export function rejectRepeated(get: (name: string) => QueryValue): void {
  for (const name of LIST_PARAMETERS) {
    const value = get(name)
    if (typeof value !== 'string' && value !== undefined && value.length > 1) {
      throw invalid([{ path: name, message: MESSAGES.once }])
    }
  }
}

function single(value: QueryValue): string | undefined {
  return typeof value === 'string' || value === undefined ? value : value[0]
}

export interface ListQuery {
  limit: number
  status?: Status
  afterId: number
}

/** `limit`, `status` and `cursor` of GET /pets, validated; `get` reads one parameter. */
export function parseListQuery(get: (name: string) => QueryValue): ListQuery {
  rejectRepeated(get)
  const details: Detail[] = []
  const rawLimit = single(get('limit')) ?? String(DEFAULT_LIMIT)
  const limit = Number(rawLimit)
  if (!/^\d+$/.test(rawLimit)) details.push({ path: 'limit', message: MESSAGES.limitInteger })
  else if (!(limit >= 1 && limit <= MAX_LIMIT)) details.push({ path: 'limit', message: MESSAGES.limitRange })
  const status = single(get('status'))
  if (status !== undefined && !isStatus(status)) details.push({ path: 'status', message: MESSAGES.status })
  if (details.length > 0) throw invalid(details)
  return { limit, status: status as Status | undefined, afterId: decodeCursor(single(get('cursor')), status) }
}

/** One page and, when more pets match, its `Link: rel="next"` value. */
export async function listPage(store: Store, query: ListQuery): Promise<{ page: Pet[]; link?: string }> {
  const { limit, status, afterId } = query
  // One extra row tells whether a next page exists without a COUNT query.
  const rows = await store.list({ afterId, limit: limit + 1, status })
  const page = rows.length > limit ? rows.slice(0, limit) : rows
  const last = page[page.length - 1]
  if (rows.length <= limit || last === undefined) return { page }
  const statusParam = status === undefined ? '' : `&status=${status}`
  return {
    page,
    link: `<${BASE}/pets?limit=${limit}${statusParam}&cursor=${encodeCursor(last.id, status)}>; rel="next"`,
  }
}

/** `Location` of a created pet. */
export function petLocation(pet: Pet): string {
  return `${BASE}/pets/${pet.id}`
}

/**
 * A decimal int64, percent-decoded (a no-op on what a router already decoded);
 * `id` is undefined beyond the safe range, where no pet can be.
 */
export function parsePetId(raw: string): { id: number | undefined; text: string } {
  let text = raw
  try {
    text = decodeURIComponent(raw)
  } catch {}
  if (!/^-?\d+$/.test(text)) throw invalid([{ path: 'petId', message: MESSAGES.petIdInteger }])
  if (text.length > 15 && (BigInt(text) < -(2n ** 63n) || BigInt(text) >= 2n ** 63n)) {
    throw invalid([{ path: 'petId', message: MESSAGES.petIdRange }])
  }
  const id = Number(text)
  return { id: Number.isSafeInteger(id) ? id : undefined, text }
}

/** The pet of GET /pets/{petId}, or a 404. */
export async function findPet(store: Store, rawId: string): Promise<Pet> {
  const { id, text } = parsePetId(rawId)
  const pet = id === undefined ? undefined : await store.get(id)
  if (pet === undefined) throw new ApiError(404, 'not_found', `No pet with id ${text}`)
  return pet
}

/**
 * What is wrong with a categoryId, if anything: an int64, a safe integer number or a bigint
 * (parseJsonBody makes one of an integer JSON.parse rounded).
 */
export function categoryIdProblem(categoryId: unknown): string | undefined {
  if (typeof categoryId === 'bigint') {
    if (categoryId < INT64_MIN) return MESSAGES.categoryMin
    if (categoryId > INT64_MAX) return MESSAGES.categoryMax
    return undefined
  }
  if (typeof categoryId !== 'number' || !Number.isInteger(categoryId)) return MESSAGES.categoryInteger
  if (categoryId < -SAFE || categoryId > SAFE) return categoryId < 0 ? MESSAGES.categoryMin : MESSAGES.categoryMax
  return undefined
}

/** A NewPet from a parsed JSON body, or a 400 naming every field at fault. */
export function parseNewPet(body: unknown): NewPet {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid([{ path: 'body', message: MESSAGES.body }])
  }
  const { name, categoryId, status } = body as Record<string, unknown>
  const details: Detail[] = []
  const fail = (path: string, message: string) => details.push({ path, message })
  if (name === undefined) fail('name', MESSAGES.required)
  else if (typeof name !== 'string') fail('name', MESSAGES.nameType)
  else if (name === '' || (name.length > MAX_NAME_LENGTH && [...name].length > MAX_NAME_LENGTH)) {
    fail('name', MESSAGES.nameLength)
  } else if (!/\S/.test(name)) fail('name', MESSAGES.nameBlank)
  if (categoryId === undefined) fail('categoryId', MESSAGES.required)
  else {
    const problem = categoryIdProblem(categoryId)
    if (problem !== undefined) fail('categoryId', problem)
  }
  if (status !== undefined && !isStatus(status)) fail('status', MESSAGES.status)
  if (details.length > 0) throw invalid(details)
  return { name: name as string, categoryId: categoryId as Int64, status: status as Status | undefined }
}

/** `application/json` or `application/…+json`, any parameters. */
export const JSON_MEDIA_TYPE = /^application\/(?:[!#$%&'*.^_`|~0-9a-z-]+\+)?json$/

export const bodyRequired = (): ApiError =>
  new ApiError(400, 'validation_error', 'body: is required (a JSON object with name and categoryId)', {}, [
    { path: 'body', message: MESSAGES.required },
  ])

/** Whether the request's headers announce a body (`content-length: 0` says there is none). */
export function hasBody(contentLength: string | undefined, transferEncoding: string | undefined): boolean {
  return transferEncoding !== undefined || (contentLength !== undefined && contentLength !== '0')
}

/**
 * Before reading a body: a 415 unless the Content-Type names JSON, but a 400
 * (body required) for a request with neither a Content-Type nor a body.
 */
export function requireJson(contentType: string | undefined, withBody: boolean): void {
  if (contentType === undefined && !withBody) throw bodyRequired()
  const type = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? ''
  if (!JSON_MEDIA_TYPE.test(type)) throw unsupportedMediaType()
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The request body's bytes as JSON: 400 `invalid_json` for bad UTF-8 or JSON, 400 `validation_error` when empty. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new ApiError(400, 'invalid_json', 'Request body is not valid UTF-8')
  }
  if (text.trim() === '') throw bodyRequired()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new ApiError(400, 'invalid_json', 'Request body is not valid JSON')
  }
  // JSON.parse rounds integers beyond 2^53: their digits are read again (only then), as the library does.
  return withExactIntegers(text, body, ['categoryId'])
}

/** Marks a bigint's digits in JSON text, to be unquoted after: unguessable, so no name can hold it. */
const BIGINT_MARK = `bigint-${crypto.randomUUID()}:`
const MARKED = new RegExp(`"${BIGINT_MARK}(-?[0-9]+)"`, 'g')

/**
 * `JSON.stringify`, with bigints (categoryIds beyond 2^53) written as their digits, which
 * `JSON.stringify` refuses to do: it throws, and only then are they written through a marker.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${BIGINT_MARK}${item}` : item)).replace(
      MARKED,
      '$1',
    )
  }
}
