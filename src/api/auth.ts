/**
 * Bearer authentication: parsing `Authorization`, and comparing keys in
 * constant time. Keys are given in clear or as SHA-256 digests.
 *
 * @module
 */

import { fixedAnswer } from '../http/errors.js'
import type { ApiAnswer, ApiRequest } from '../http/exchange.js'
import { PetstoreError } from '../shared/petstore-error.js'
import { shown } from '../util/option-checks.js'
import { sha256Of } from '../util/sha256.js'

/** Decides whether a bearer token is a valid key. */
export type KeyCheck = (token: string, request: Request) => boolean | Promise<boolean>

const REALM = 'Bearer realm="petstore"'
// RFC 7235: the scheme is case-insensitive and separated from its token by spaces.
const BEARER = /^bearer +(\S+) *$/i

/**
 * The token of a `Bearer` credential, or `undefined` for any other `Authorization` (or none).
 *
 * @example
 * ```ts
 * bearerToken('Bearer abc') // → 'abc'
 * bearerToken('Basic eDp5') // → undefined
 * ```
 */
export const bearerToken = (header: string | null): string | undefined =>
  header === null ? undefined : BEARER.exec(header)?.[1]
/** A key given by its digest rather than in clear. The prefix is case-insensitive, so `SHA256:…` is no clear key either. */
const DIGEST_PREFIX = /^sha256:/i
const DIGEST = /^sha256:[0-9a-f]{64}$/i

/** The 32 bytes written as 64 hex digits after `sha256:`. */
function fromHex(entry: string): Uint8Array {
  const hex = entry.slice('sha256:'.length)
  const bytes = new Uint8Array(32)
  for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/**
 * What is wrong with one entry of `keys`, or `undefined` when it is usable.
 * The answer never quotes the entry: it may be a secret.
 *
 * @example
 * ```ts
 * keyProblem('sha256:' + 'ab'.repeat(32)) // → undefined
 * keyProblem('sha256:abc') // → 'a sha256: key must be followed by 64 hex digits (its SHA-256 digest)'
 * ```
 */
export function keyProblem(entry: unknown): string | undefined {
  if (typeof entry !== 'string' || !/^\S+$/.test(entry)) return 'a key must be a non-empty string without whitespace'
  // Never sent as it is: browsers refuse such a header value, and Node reads its bytes as Latin-1.
  if (!/^[\x21-\x7e]+$/.test(entry))
    return 'a key must be printable ASCII: a client cannot send other characters in a header'
  // `Bearer k,` reads as two Authorization fields joined, the second empty: a 400, never a match.
  if (entry.endsWith(',')) return 'a key must not end with ",": sent, it reads as a second, empty Authorization field'
  if (DIGEST_PREFIX.test(entry) && !DIGEST.test(entry)) {
    return 'a sha256: key must be followed by 64 hex digits (its SHA-256 digest)'
  }
  return undefined
}

/**
 * Compares a token's digest with every key digest, all the way through, so
 * that neither the position of a mismatch nor which key matched shows in the
 * time taken.
 */
function matchesDigest(token: Uint8Array, keys: readonly Uint8Array[]): boolean {
  let matched = 0
  for (const key of keys) {
    let difference = 0
    for (let i = 0; i < key.length; i++) difference |= (key[i] ?? 0) ^ (token[i] ?? 0)
    matched |= difference === 0 ? 1 : 0
  }
  return matched === 1
}

/**
 * Compares a token with every key given in clear. The time taken depends on
 * the token's length and the number of keys only: each key is walked as
 * many times as the token is long (cycling through it), so neither its
 * characters nor its length show. Synchronous on purpose: hashing each
 * token with `crypto.subtle` would cost every request a trip through Node's
 * thread pool.
 */
function matchesClear(token: string, keys: readonly string[]): boolean {
  let matched = 0
  for (const key of keys) {
    let difference = token.length ^ key.length
    for (let i = 0; i < token.length; i++) difference |= token.charCodeAt(i) ^ key.charCodeAt(i % key.length)
    matched |= difference === 0 ? 1 : 0
  }
  return matched === 1
}

/** What may follow a `,` inside one credential: an auth-param (`realm="x"`), not a credential of its own. */
const AUTH_PARAM = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ *=/

/**
 * Whether `header` is two or more Authorization fields joined with `,` (a web
 * `Request` and the Node adapter join them so): an empty one (`, Bearer k`,
 * `Bearer k, `) or a second credential (`Basic x, Bearer k`). One credential's
 * own commas only part its auth-params (`Digest a="1, 2", b="3"`; RFC 9110
 * §11.4). A proxy in front may have judged the other field, so neither is
 * trusted.
 */
function fieldsJoined(header: string): boolean {
  let quoted = false
  let first = true
  let start = 0
  for (let i = 0; i <= header.length; i++) {
    const char = header[i]
    if (quoted) {
      if (char === '\\') i++
      else if (char === '"') quoted = false
    } else if (char === '"') {
      quoted = true
    } else if (char === ',' || char === undefined) {
      if (char === undefined && first) return false
      const field = header.slice(start, i).trim()
      if (field === '' || (!first && !AUTH_PARAM.test(field))) return true
      first = false
      start = i + 1
    }
  }
  return false
}

/** Checks the keys given to `createPetstore`: failing closed, never serving without one. */
function assertKeys(keys: readonly string[]): void {
  if (!Array.isArray(keys)) {
    const hint = typeof keys === 'string' ? ` (one key is a list of one: [${JSON.stringify(keys)}])` : ''
    throw new TypeError(
      `createPetstore: keys must be a list of API keys, or a function (token, request) => boolean; got ${shown(keys)}${hint}`,
    )
  }
  if (keys.length === 0) {
    throw new TypeError('createPetstore: `keys` is empty; give at least one API key (it never serves unauthenticated)')
  }
  keys.forEach((key, index) => {
    const problem = keyProblem(key)
    if (problem) throw new TypeError(`createPetstore: keys[${index}]: ${problem}`)
  })
}

/**
 * Builds the check run before routing: `undefined` (or a promise of it) when
 * the request carries a valid bearer key, else the 401 (or 400) to answer.
 * Refusals are returned, not thrown, and made once: under a flood of
 * unauthenticated requests a refusal is the answer that counts, and building
 * an Error per request cost more than the rest of the 401. Keys
 * in clear are checked synchronously; a `sha256:<hex>` entry is the digest of
 * a key, compared with the token's digest, so the key itself need not be
 * configured anywhere. A `keys` function that throws or rejects fails the
 * request as a 500, through the caller.
 */
export function createAuthenticator(
  keys: readonly string[] | KeyCheck,
): (request: ApiRequest) => ApiAnswer | undefined | Promise<ApiAnswer | undefined> {
  let isKey: (token: string, request: ApiRequest) => unknown
  if (typeof keys === 'function') {
    isKey = (token, request) => keys(token, request.toRequest())
  } else {
    assertKeys(keys)
    const clear = keys.filter((key) => !DIGEST.test(key))
    const hashed = keys.filter((key) => DIGEST.test(key)).map(fromHex)
    isKey =
      hashed.length === 0
        ? (token) => matchesClear(token, clear)
        : (token) => matchesDigest(sha256Of(token), hashed) || matchesClear(token, clear)
  }
  // RFC 6750 §3.1: name the error only when a token was actually presented.
  const missing = fixedAnswer(
    new PetstoreError(401, 'unauthorized', 'Missing bearer API key: send Authorization: Bearer <key>', {
      headers: { 'www-authenticate': REALM },
    }),
  )
  const invalid = fixedAnswer(
    new PetstoreError(401, 'unauthorized', 'Invalid API key', {
      headers: { 'www-authenticate': `${REALM}, error="invalid_token"` },
    }),
  )
  const repeated = fixedAnswer(
    new PetstoreError(
      400,
      'bad_request',
      'Authorization was given more than once; send it once: Authorization: Bearer <key>',
    ),
  )
  return (request) => {
    const header = request.header('authorization')
    if (header === null) return missing()
    const token = bearerToken(header)
    // Fields are joined with `, `, so a header BEARER takes (no space inside) is two only when the second is
    // empty (`Bearer k, `); a key that merely holds a `,` is one field. A valid key never needs the search.
    // charCodeAt, not endsWith: a builtin call on every authenticated request.
    if (token === undefined ? fieldsJoined(header) : token.charCodeAt(token.length - 1) === 44) return repeated()
    if (token === undefined) return missing()
    const valid = isKey(token, request)
    // Only `true` lets a request in: a key function answering `'no'` or a stray object fails closed.
    if (valid === true) return undefined
    if (typeof (valid as PromiseLike<unknown> | null)?.then !== 'function') return invalid()
    return Promise.resolve(valid).then((answer) => (answer === true ? undefined : invalid()))
  }
}
