// What the three lean peers (node-http.mjs, fastify.mjs, hono.mjs) share: the
// command line, and the API's rules that are not HTTP (the cursor's HMAC, the
// request id, the key comparison, a pet as JSON text, exact int64s in a body).
// Plain functions that return values, never throw: each peer writes its own
// HTTP, routing and validation layer the way its framework is written.
//
//   node bench/peers/<peer>.mjs --port 0 --key KEY --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://…
//                               [--cursor-secret S]   (else env PETSTORE_CURSOR_SECRET, as the binary)
import { createHmac, randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { openStore } from './store.mjs'

export const BASE = '/v1'
export const MAX_BODY_BYTES = 100 * 1024
export const MAX_LIMIT = 100
export const MAX_NAME_LENGTH = 255
export const STATUSES = ['available', 'pending', 'sold']
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const SAFE = Number.MAX_SAFE_INTEGER

/** The library's `details[].message` texts. */
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
}

/** Error bodies whose text never changes, written once. */
export const TEXT = {
  missingKey: 'Missing bearer API key: send Authorization: Bearer <key>',
  wrongKey: 'Invalid API key',
  twice: 'Authorization was given more than once; send it once: Authorization: Bearer <key>',
  notFound: 'No such route',
  unsupported: 'Request body must be application/json',
  tooLarge: `Request body is larger than ${MAX_BODY_BYTES} bytes`,
  notUtf8: 'Request body is not valid UTF-8',
  notJson: 'Request body is not valid JSON',
  bodyRequired: 'body: is required (a JSON object with name and categoryId)',
  internal: 'The server failed to answer this request',
}
export const REALM = 'Bearer realm="petstore"'
export const REALM_INVALID = 'Bearer realm="petstore", error="invalid_token"'
export const DEPRECATION = '@1795219200'
export const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'
export const SUCCESSOR = `<${BASE}/pets>; rel="successor-version"`

/** `{"code":…,"message":…,"status":…[,"details":[…]]}`, the API's Error body. */
export function errorJson(status, code, message, details) {
  const tail = details === undefined ? '' : `,"details":${JSON.stringify(details)}`
  return `{"code":"${code}","message":${JSON.stringify(message)},"status":${status}${tail}}`
}

/** A 400 validation_error body from its details. */
export function invalidJson(details) {
  let message = ''
  for (let i = 0; i < details.length; i++) message += `${i === 0 ? '' : '; '}${details[i].path}: ${details[i].message}`
  return errorJson(400, 'validation_error', message, details)
}

/**
 * The command line: port, key, cursor secret and the opened store (its pets in `table`).
 * `--rows`: pages read as rows and written as JSON here, as most hand-written servers do,
 * rather than as JSON text written by the database (the store's `listJson`, what ours does).
 */
export async function peerOptions(table) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      db: { type: 'string', default: 'memory' },
      key: { type: 'string' },
      'cursor-secret': { type: 'string' },
      rows: { type: 'boolean', default: false },
    },
  })
  if (!values.key) throw new Error('--key is required')
  const cursorSecret =
    values['cursor-secret'] || process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')
  // A table of its own beside the JSON-page peer, on a database server they share.
  const store = await openStore(values.db, values.rows ? `${table}_rows` : table)
  if (values.rows) store.listJson = undefined
  return { port: Number(values.port), key: values.key, cursorSecret, store }
}

/** The ready line bench/server-process.ts waits for. */
export function announce(name, port) {
  console.log(`${name} listening on http://127.0.0.1:${port}/v1`)
}

/** On SIGTERM (how the bench stops a server): close, close the store, exit; no drain. */
export function exitOnSigterm(server, store) {
  process.once('SIGTERM', () => {
    server.close()
    server.closeAllConnections?.()
    Promise.resolve()
      .then(() => store.close?.())
      .finally(() => process.exit(0))
  })
}

/** Runs `main`, exiting 1 with the error on stderr should it fail to start. */
export function run(main) {
  main().catch((error) => {
    console.error(error)
    process.exit(1)
  })
}

/**
 * Cursors as src/api/cursor.ts spells them: `<id>.<first 12 bytes of
 * HMAC-SHA-256(secret, "petstore-cursor-1|<status>|<id>") in base64url>`, issued
 * ones remembered (4096, cleared whole) as ours remembers them.
 * `decode` answers the id, or -1 for a cursor not issued for `status`.
 */
export function cursorCodec(secret) {
  const issued = new Map()
  const encode = (id, status) => {
    const message = `petstore-cursor-1|${status ?? ''}|${id}`
    let cursor = issued.get(message)
    if (cursor === undefined) {
      cursor = `${id}.${createHmac('sha256', secret).update(message).digest().subarray(0, 12).toString('base64url')}`
      if (issued.size >= 4096) issued.clear()
      issued.set(message, cursor)
    }
    return cursor
  }
  const FORMAT = /^(0|[1-9][0-9]{0,15})\.[A-Za-z0-9_-]{16}$/
  const decode = (raw, status) => {
    const match = FORMAT.exec(raw)
    if (match === null) return -1
    const id = Number(match[1])
    if (!Number.isSafeInteger(id)) return -1
    const expected = encode(id, status)
    // Constant time over the cursor, as ours.
    let difference = expected.length ^ raw.length
    for (let i = 0; i < raw.length; i++) difference |= expected.charCodeAt(i) ^ raw.charCodeAt(i)
    return difference === 0 ? id : -1
  }
  return { encode, decode }
}

const SANE_ID = /^[\x21-\x7e]{1,128}$/
let idPrefix
let idCounter = 0

/** `X-Request-Id` as src/http/request-id.ts makes it: the client's when sane, else a per-process prefix and a counter. */
export function requestId(sent) {
  if (sent !== undefined && SANE_ID.test(sent)) return sent
  if (idPrefix === undefined) {
    const random = randomBytes(8)
    const part = (n) => (n % 36 ** 4).toString(36).padStart(4, '0')
    idPrefix = `${part(random.readUInt32LE(0))}${part(random.readUInt32LE(4))}-`
  }
  return idPrefix + (++idCounter).toString(36)
}

const BEARER = /^bearer +(\S+) *$/i
const BEARER_START = /^bearer /i

/**
 * The bearer check on the Authorization value (repeated fields joined with
 * `, `, as a web Request joins them): 0 when the key is right, else which
 * refusal: 1 missing, 2 wrong, 3 given twice. The key is compared in constant
 * time as src/api/auth.ts does (the key walked as often as the token is long).
 */
export function keyCheck(key) {
  return (header) => {
    if (header === undefined) return 1
    if (header.includes(', ') && BEARER_START.test(header)) return 3
    const match = BEARER.exec(header)
    if (match === null) return 1
    const token = match[1]
    let difference = token.length ^ key.length
    for (let i = 0; i < token.length; i++) difference |= token.charCodeAt(i) ^ key.charCodeAt(i % key.length)
    return difference === 0 ? 0 : 2
  }
}

/** Every Authorization field of a Node request joined with `, ` (Node's `headers` keeps the first only). */
export function allAuthorization(raw, first) {
  if (first === undefined) return undefined
  let joined = first
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) joined += `, ${raw[i + 1]}`
  }
  return joined
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/** One pet as JSON text, fields in the schema's order (categoryId may be a bigint: its digits). */
export function petJson(pet) {
  const name = NEEDS_ESCAPE.test(pet.name) ? JSON.stringify(pet.name) : `"${pet.name}"`
  const status = pet.status === undefined ? '' : `,"status":"${pet.status}"`
  return `{"id":${pet.id},"name":${name},"categoryId":${pet.categoryId}${status}}`
}

/** The first `count` pets as a JSON array. */
export function petsJson(pets, count) {
  let text = '['
  for (let i = 0; i < count; i++) text += i === 0 ? petJson(pets[i]) : `,${petJson(pets[i])}`
  return `${text}]`
}

/** What is wrong with a categoryId (a number, or a bigint from exactIntegers), or undefined. */
export function categoryIdProblem(value) {
  if (typeof value === 'bigint') {
    if (value < INT64_MIN) return MESSAGES.categoryMin
    if (value > INT64_MAX) return MESSAGES.categoryMax
    return undefined
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) return MESSAGES.categoryInteger
  if (value < -SAFE || value > SAFE) return value < 0 ? MESSAGES.categoryMin : MESSAGES.categoryMax
  return undefined
}

const TOKEN = /"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*/g

/** The integer a JSON number token spells: a bigint, undefined for a fraction, null when too long to matter. */
function integerOf(token) {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(token)
  if (match === null) return null
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match
  let digits = `${whole}${fraction}`.replace(/^0+/, '')
  let shift = Number(exponent) - fraction.length
  const significant = digits.replace(/0+$/, '')
  shift += digits.length - significant.length
  digits = significant
  if (digits === '') return 0n
  if (shift < 0) return undefined
  if (digits.length + shift > 21) return null
  return BigInt(`${sign}${digits}`) * 10n ** BigInt(shift)
}

/**
 * `body.categoryId` read again from the text when JSON.parse rounded it (an
 * integer beyond 2^53), as src/http/json-int64.ts does; only then is the text scanned.
 */
export function exactCategoryId(text, body) {
  const value = body.categoryId
  if (typeof value !== 'number' || !Number.isInteger(value) || Number.isSafeInteger(value)) return value
  const tokens = JSON.parse(text.replace(TOKEN, (token) => (token[0] === '"' ? token : `"${token}"`)))
  const integer = integerOf(tokens.categoryId)
  return integer === null ? value : (integer ?? Number.NaN)
}

/** `application/json` or `application/…+json`, any parameters. */
export function isJsonType(contentType) {
  const type = contentType.split(';', 1)[0].trim().toLowerCase()
  return type === 'application/json' || /^application\/[!#$%&'*.^_`|~0-9a-z-]+\+json$/.test(type)
}

/** The NewPet body's problems, in the library's order (name, categoryId, status); empty when valid. */
export function newPetDetails(body) {
  const details = []
  const { name, categoryId, status } = body
  if (name === undefined) details.push({ path: 'name', message: MESSAGES.required })
  else if (typeof name !== 'string') details.push({ path: 'name', message: MESSAGES.nameType })
  else if (name === '' || (name.length > MAX_NAME_LENGTH && [...name].length > MAX_NAME_LENGTH)) {
    details.push({ path: 'name', message: MESSAGES.nameLength })
  } else if (!/\S/.test(name)) details.push({ path: 'name', message: MESSAGES.nameBlank })
  if (categoryId === undefined) details.push({ path: 'categoryId', message: MESSAGES.required })
  else {
    const problem = categoryIdProblem(categoryId)
    if (problem !== undefined) details.push({ path: 'categoryId', message: problem })
  }
  if (status !== undefined && !STATUSES.includes(status)) details.push({ path: 'status', message: MESSAGES.status })
  return details
}
