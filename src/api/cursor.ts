/**
 * The opaque `cursor` of `Link: rel="next"`: the last id of a page, so the
 * next page starts strictly after it (keyset pagination visits every pet
 * exactly once even while pets are added, because new ids only grow), bound
 * to the `status` it was issued for and to the store's generation, and signed.
 * The generation changes on every reset: ids restart then, so a cursor from
 * before would resume among other pets, and is refused instead.
 *
 * Spelling: `<last id>.<generation>.<tag>`, both in decimal, the tag being the
 * first 12 bytes of HMAC-SHA-256(secret,
 * `petstore-cursor-2|<status or empty>|<generation>|<id>`) in base64url (16
 * characters, no padding: 96 bits fill them exactly, so no two spellings
 * decode alike). `limit` is left out: a walk stays whole whatever page size
 * each step asks for.
 *
 * @module
 */
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'
import { ErrorAnswer } from '../http/errors.js'

/** Where a cursor continues: after the pet `after`, among the pets of `generation`. */
export interface Cursor {
  after: number
  generation: number
}

/** Issues and checks cursors under one secret. */
export interface CursorCodec {
  /**
   * The cursor continuing after `lastId` in the walk over `status`, among the pets of
   * `generation` (the store's, as the page was read: 0 for a store that has none). @default 0
   */
  encode(lastId: number, status: string | undefined, generation?: number): string
  /** Where a cursor continues, or the 400 naming `cursor` when this codec did not issue it for `status`. */
  decode(cursor: string, status: string | undefined): Cursor | ErrorAnswer
}

const FORMAT = /^(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_-]{16})$/
const TAG_BYTES = 12
/** Issued cursors remembered, so that a page asked for again (a first page, most often) costs no HMAC. */
const REMEMBERED = 4096

const encoder = new TextEncoder()

function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_')
}

/** The 400 naming `cursor`, for `message`. */
function invalid(message: string): ErrorAnswer {
  return new ErrorAnswer(400, 'validation_error', `cursor: ${message}`, [{ path: 'cursor', message }])
}

const refuse = () => invalid('is not a cursor this server issued for this query')

/**
 * The 400 of a cursor issued before the pets were reset: it names the page after a pet of another
 * generation, and resuming there would skip pets or repeat them.
 */
export const staleCursor = (): ErrorAnswer => invalid('the pets were reset since this cursor was issued')

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
 * const cursor = codec.encode(42, 'sold', 3) // → '42.3.' + 16 characters
 * codec.decode(cursor, 'sold') // → { after: 42, generation: 3 }
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

  const cursorOf = (id: number, status: string | undefined, generation = 0): string => {
    const message = `petstore-cursor-2|${status ?? ''}|${generation}|${id}`
    let cursor = issued.get(message)
    if (cursor === undefined) {
      const mac = keyed.clone().update(encoder.encode(message)).digest()
      cursor = `${id}.${generation}.${toBase64Url(mac.subarray(0, TAG_BYTES))}`
      if (issued.size >= REMEMBERED) issued.clear()
      issued.set(message, cursor)
    }
    return cursor
  }

  return {
    encode: cursorOf,
    decode(cursor, status) {
      const parts = FORMAT.exec(cursor)
      if (parts === null) return refuse()
      const after = Number(parts[1])
      const generation = Number(parts[2])
      // Only what this codec issued is taken, and it issues safe integers: a number past 2^53 reads
      // as another, whose cursor is spelled otherwise, and is refused here.
      return sameCursor(cursorOf(after, status, generation), cursor) ? { after, generation } : refuse()
    },
  }
}
