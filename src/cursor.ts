/**
 * The opaque `cursor` of `Link: rel="next"`: the last id of a page, so the
 * next page starts strictly after it. Keyset pagination visits every pet
 * exactly once even while pets are added, because new ids only grow.
 *
 * @module
 */
import { PetstoreError } from './errors.js'

const toBase64Url = (text: string) => btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

/** Encodes the id a page ended on. */
export function encodeCursor(lastId: number): string {
  return toBase64Url(`p${lastId}`)
}

/** Decodes a cursor made by `encodeCursor`; anything else is a 400 naming `cursor`. */
export function decodeCursor(cursor: string): number {
  let text = ''
  if (/^[A-Za-z0-9_-]{1,32}$/.test(cursor)) {
    try {
      text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'))
    } catch {}
  }
  const id = /^p(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text.slice(1)) : Number.NaN
  if (!Number.isSafeInteger(id)) {
    throw new PetstoreError(400, 'validation_error', 'cursor: is not a cursor this server issued', {
      details: [{ path: 'cursor', message: 'is not a cursor this server issued' }],
    })
  }
  return id
}
