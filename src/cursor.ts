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
import { PetstoreError } from './errors.js'

/** Issues and checks cursors under one secret. */
export interface CursorCodec {
  /** The cursor continuing after `lastId` in the walk over `status`. */
  encode(lastId: number, status: string | undefined): string | Promise<string>
  /** The id a cursor continues after; a 400 naming `cursor` when this codec did not issue it for `status`. */
  decode(cursor: string, status: string | undefined): number | Promise<number>
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

function refuse(): PetstoreError {
  return new PetstoreError(400, 'validation_error', 'cursor: is not a cursor this server issued for this query', {
    details: [{ path: 'cursor', message: 'is not a cursor this server issued for this query' }],
  })
}

/** Constant time over the 16 characters: the position of a mismatch must not show. */
function sameTag(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/**
 * A codec under `secret` (any non-empty text), or under 32 random bytes of
 * this process when none is given: then only this process accepts its cursors.
 *
 * @example
 * ```ts
 * const codec = cursorCodec('a shared secret')
 * const cursor = await codec.encode(42, 'sold') // → '42.' + 16 characters
 * await codec.decode(cursor, 'sold') // → 42
 * await codec.decode(cursor, undefined) // throws a 400 validation_error naming `cursor`
 * ```
 */
export function cursorCodec(secret?: string): CursorCodec {
  if (secret !== undefined && (typeof secret !== 'string' || secret === '')) {
    throw new TypeError('createPetstore: cursorSecret must be a non-empty string')
  }
  const raw = secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : encoder.encode(secret)
  let key: Promise<CryptoKey> | undefined
  /** `message` → cursor, for cursors issued (or checked) lately; cleared whole when full. */
  const issued = new Map<string, string>()

  const sign = async (message: string, id: number): Promise<string> => {
    key ??= crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key, encoder.encode(message)))
    const cursor = `${id}.${toBase64Url(mac.subarray(0, TAG_BYTES))}`
    if (issued.size >= REMEMBERED) issued.clear()
    issued.set(message, cursor)
    return cursor
  }
  const messageOf = (id: number, status: string | undefined) => `petstore-cursor-1|${status ?? ''}|${id}`

  return {
    encode(lastId, status) {
      const message = messageOf(lastId, status)
      return issued.get(message) ?? sign(message, lastId)
    },
    decode(cursor, status) {
      const parts = FORMAT.exec(cursor)
      const id = parts ? Number(parts[1]) : Number.NaN
      if (!Number.isSafeInteger(id)) throw refuse()
      const message = messageOf(id, status)
      const known = issued.get(message)
      if (known !== undefined) {
        if (sameTag(known, cursor)) return id
        throw refuse()
      }
      return sign(message, id).then((expected) => {
        if (!sameTag(expected, cursor)) throw refuse()
        return id
      })
    },
  }
}
