/**
 * Bearer authentication: parsing `Authorization`, and comparing keys in
 * constant time.
 *
 * @module
 */
import { PetstoreError } from './errors.js'

/** Decides whether a bearer token is a valid key. */
export type KeyCheck = (token: string, request: Request) => boolean | Promise<boolean>

const REALM = 'Bearer realm="petstore"'
// RFC 7235: the scheme is case-insensitive and separated from its token by spaces.
const BEARER = /^bearer +(\S+) *$/i

const encoder = new TextEncoder()
const digest = async (text: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))

/**
 * Compares a token with every key, all the way through, so that neither the
 * position of a mismatch nor which key matched shows in the time taken. Both
 * sides are SHA-256 digests, so the length of a key does not show either.
 */
function matchesAny(token: Uint8Array, keys: readonly Uint8Array[]): boolean {
  let matched = 0
  for (const key of keys) {
    let difference = 0
    for (let i = 0; i < key.length; i++) difference |= (key[i] ?? 0) ^ (token[i] ?? 0)
    matched |= difference === 0 ? 1 : 0
  }
  return matched === 1
}

/** Checks the keys given to `createPetstore`: failing closed, never serving without one. */
function assertKeys(keys: readonly string[]): void {
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new TypeError('createPetstore: `keys` is empty; give at least one API key (it never serves unauthenticated)')
  }
  for (const key of keys) {
    if (typeof key !== 'string' || !/^\S+$/.test(key)) {
      throw new TypeError('createPetstore: every key must be a non-empty string without whitespace')
    }
  }
}

/**
 * Builds the check run before routing: resolves when the request carries a
 * valid bearer key, throws a 401 `PetstoreError` otherwise.
 */
export function createAuthenticator(keys: readonly string[] | KeyCheck): (request: Request) => Promise<void> {
  let isKey: KeyCheck
  if (typeof keys === 'function') {
    isKey = keys
  } else {
    assertKeys(keys)
    const digests = Promise.all(keys.map(digest))
    isKey = async (token) => matchesAny(await digest(token), await digests)
  }
  return async (request) => {
    const header = request.headers.get('authorization')
    const token = header === null ? undefined : BEARER.exec(header)?.[1]
    if (token !== undefined && (await isKey(token, request))) return
    // RFC 6750 §3.1: name the error only when a token was actually presented.
    throw new PetstoreError(
      401,
      'unauthorized',
      token === undefined ? 'Missing bearer API key: send Authorization: Bearer <key>' : 'Invalid API key',
      { headers: { 'www-authenticate': token === undefined ? REALM : `${REALM}, error="invalid_token"` } },
    )
  }
}
