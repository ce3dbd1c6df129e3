/**
 * The opaque `cursor` of `Link: rel="next"`: the last id of a page, so the
 * next page starts strictly after it (keyset pagination visits every pet
 * exactly once even while pets are added, because new ids only grow), bound
 * to the `status` it was issued for and signed.
 *
 * Spelling: `<last id in decimal>.<tag>`, the tag being the first 12 bytes of
 * HMAC-SHA-256(secret, `petstore-cursor-1|<status or empty>|<id>`) in
 * base64url (16 characters, no padding: 96 bits fill them exactly, so no two
 * spellings decode alike). `limit` is left out: a walk stays whole whatever
 * page size each step asks for.
 *
 * @module
 */
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { ErrorAnswer } from '../http/errors.js'

/** Issues and checks cursors under one secret. */
export interface CursorCodec {
  /** The cursor continuing after `lastId` in the walk over `status`. */
  encode(lastId: number, status: string | undefined): string
  /** The id a cursor continues after, or the 400 naming `cursor` when this codec did not issue it for `status`. */
  decode(cursor: string, status: string | undefined): number | ErrorAnswer
}

const FORMAT = /^(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_-]{16})$/
const TAG_BYTES = 12
/** Issued cursors remembered, so that a page asked for again (a first page, most often) costs no HMAC. */
const REMEMBERED = 4096

const encoder = new TextEncoder()

function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_')
}

function refuse(): ErrorAnswer {
  return new ErrorAnswer(400, 'validation_error', 'cursor: is not a cursor this server issued for this query', [
    { path: 'cursor', message: 'is not a cursor this server issued for this query' },
  ])
}

/** Constant time over the cursor: the position of a mismatch must not show. */
function sameCursor(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/**
 * A codec under `secret` (any non-empty text), or under 32 random bytes of
 * this handler when none is given: then only this handler accepts its cursors.
 *
 * The HMAC is @noble/hashes' (audited, synchronous, the same on every
 * runtime), on a keyed state made once and cloned per cursor. Not Web
 * Crypto's `crypto.subtle.sign`: on Node each call is a trip through the
 * thread pool, which made a walk over fresh pages more than twice as slow.
 *
 * @example
 * ```ts
 * const codec = cursorCodec('a shared secret')
 * const cursor = codec.encode(42, 'sold') // → '42.' + 16 characters
 * codec.decode(cursor, 'sold') // → 42
 * codec.decode(cursor, undefined) // → an ErrorAnswer: 400 validation_error naming `cursor`
 * ```
 */
export function cursorCodec(secret?: string): CursorCodec {
  if (secret !== undefined && (typeof secret !== 'string' || secret === '')) {
    throw new TypeError('createPetstore: cursorSecret must be a non-empty string')
  }
  const keyed = hmac.create(sha256, secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : secret)
  /** `message` → cursor, for cursors issued (or checked) lately; cleared whole when full. */
  const issued = new Map<string, string>()

  const cursorOf = (id: number, status: string | undefined): string => {
    const message = `petstore-cursor-1|${status ?? ''}|${id}`
    let cursor = issued.get(message)
    if (cursor === undefined) {
      const mac = keyed.clone().update(encoder.encode(message)).digest()
      cursor = `${id}.${toBase64Url(mac.subarray(0, TAG_BYTES))}`
      if (issued.size >= REMEMBERED) issued.clear()
      issued.set(message, cursor)
    }
    return cursor
  }

  return {
    encode: cursorOf,
    decode(cursor, status) {
      const parts = FORMAT.exec(cursor)
      const id = parts ? Number(parts[1]) : Number.NaN
      return Number.isSafeInteger(id) && sameCursor(cursorOf(id, status), cursor) ? id : refuse()
    },
  }
}
