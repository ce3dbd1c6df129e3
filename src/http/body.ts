/**
 * Reading a JSON request body: media type, byte limit enforced while the
 * stream is read, strict UTF-8, then JSON.
 *
 * @module
 */

import { PetstoreError } from '../shared/petstore-error.js'
import { ErrorAnswer } from './errors.js'
import type { ApiAnswer, ApiRequest } from './exchange.js'
import { withExactIntegers } from './json-int64.js'

/** `application/json` or any `application/*+json`, parameters (a UTF-8 charset) allowed. */
function isJson(contentType: string): boolean {
  // What nearly every client sends: no split, trim or lower-casing for it.
  if (contentType === 'application/json' || contentType === 'application/json; charset=utf-8') return true
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? ''
  return type === 'application/json' || /^application\/[!#$%&'*.^_`|~0-9a-z-]+\+json$/.test(type)
}

/**
 * The charset a JSON media type declares other than UTF-8 (`iso-8859-1`), or undefined. JSON is
 * UTF-8 (RFC 8259 §8.1): read as UTF-8, a Latin-1 `é` would be stored as another name, or refused
 * as bytes that are not UTF-8, with a message that does not say why.
 */
function otherCharset(contentType: string): string | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType)?.[1]?.toLowerCase()
  return charset === undefined || charset === 'utf-8' || charset === 'utf8' ? undefined : charset
}

/**
 * The 415 for a body sent compressed (`Content-Encoding: gzip`), which the API does not decode, with
 * `accept-encoding: identity` to say how to send it (RFC 9110 §12.5.3); undefined for none or
 * `identity`. Asked only once the body has failed to read as UTF-8 JSON: compressed, it never does,
 * and a create that reads well is spared the header's lookup.
 */
function encodedBody(request: ApiRequest): PetstoreError | undefined {
  const coded = request.header('content-encoding')?.trim().toLowerCase()
  if (coded === undefined || coded === '' || coded === 'identity') return undefined
  const message = `Content-Encoding ${coded.slice(0, 40)} is not supported: send the body unencoded`
  return new PetstoreError(415, 'unsupported_media_type', message, { headers: { 'accept-encoding': 'identity' } })
}

/** What a route expects of a JSON body. */
export interface JsonBodyShape {
  /** Top-level keys whose integers are read digit for digit, as bigints beyond 2^53. */
  exactIntegers: readonly string[]
  /** What the body must be, for the 400 of a missing one: `a JSON object with name`. */
  expected: string
}

const bodyRequired = ({ expected }: JsonBodyShape) =>
  new ErrorAnswer(400, 'validation_error', `body: is required (${expected})`, [
    { path: 'body', message: 'is required' },
  ])

const tooLargeMessage = (maxBytes: number) => `Request body is larger than ${maxBytes} bytes`

/** The 413 of a body past `maxBytes`, for an adapter's `readText` to reject with. */
export const tooLarge = (maxBytes: number): PetstoreError =>
  new PetstoreError(413, 'payload_too_large', tooLargeMessage(maxBytes))

/**
 * Reads at most `maxBytes` of the body and stops reading as soon as more
 * arrives, so an oversized upload is never held in memory.
 *
 * The stream is deliberately left as it is rather than cancelled: on Node,
 * cancelling destroys the socket before the 413 can be written, and the
 * client sees a connection reset instead of the answer. What becomes of the
 * unread bytes is the runtime's business (the Node adapter drains them for a
 * bounded time, then closes the connection).
 */
export async function readLimited(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > maxBytes) throw tooLarge(maxBytes)
    chunks.push(chunk)
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A body's bytes as text: strict UTF-8, a leading byte-order mark dropped (as
 * `TextDecoder` does); the 400 `invalid_json` PetstoreError for bytes that
 * are not UTF-8.
 */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    throw new PetstoreError(400, 'invalid_json', 'Request body is not valid UTF-8')
  }
}

/**
 * Reads the JSON body of `request` and hands it to `use`, with the request and
 * `context`. Refuses at once (no promise) with 415 for another media type, 413
 * for a declared length past `maxBytes` and 400 `validation_error` for no
 * body; the promised answer is 413 for a body that grows past `maxBytes`, 400
 * `invalid_json` for bytes that are not UTF-8 JSON or a body broken off, and
 * 400 `validation_error` for an empty one, or whatever `use` answers or
 * throws. The `shape`'s exact-integer keys keep integers beyond 2^53
 * exactly, as bigints.
 *
 * Not an async function, and `use` runs in the step that parses: a create is
 * one promise (the read) and one step after it, where each `await`, or a
 * second `then` for `use`, would add a promise and a turn of the queue.
 */
export function readJson<C>(
  request: ApiRequest,
  maxBytes: number,
  shape: JsonBodyShape,
  use: JsonUse<C>,
  context: C,
): ApiAnswer | Promise<ApiAnswer> {
  const contentType = request.header('content-type')
  const length = request.header('content-length')
  // Over HTTP a POST without a body still has one, empty: `content-length: 0` says so.
  const body = length === '0' ? null : request.body()
  if (body === null) return contentType === null || isJson(contentType) ? bodyRequired(shape) : unsupported()
  if (contentType === null ? length !== null : !isJson(contentType)) return unsupported()
  // `application/json` (16 characters) declares nothing more.
  const charset =
    contentType === null || contentType.length <= 16 || contentType === 'application/json; charset=utf-8'
      ? undefined
      : otherCharset(contentType)
  if (charset !== undefined) {
    return new ErrorAnswer(
      415,
      'unsupported_media_type',
      `Request body must be JSON in UTF-8, got charset=${charset.slice(0, 40)}`,
    )
  }
  if (Number(length ?? Number.NaN) > maxBytes)
    return new ErrorAnswer(413, 'payload_too_large', tooLargeMessage(maxBytes))
  // A carrier that reads the body whole does so without a promise per chunk.
  const read = request.readText ? request.readText(maxBytes) : readLimited(body, maxBytes).then(utf8Text)
  // No type and no length: a runtime may hand every POST a stream, an empty one when none was sent (a
  // POST without a body: 400, as with `content-length: 0`); one that holds bytes is of no type (415).
  // With a length and no type, the 415 was given above, before the body was asked for.
  if (contentType === null) return read.then((text) => untyped(text, shape), failedRead)
  return read.then(
    (text) => {
      const parsed = jsonOf(text, shape)
      if (!(parsed instanceof ErrorAnswer)) return use(parsed, request, context)
      const encoded = encodedBody(request)
      if (encoded !== undefined) throw encoded
      return parsed
    },
    // The read's failures only: what `use` throws is answered as it is.
    (error) => {
      const encoded = error instanceof PetstoreError && error.code === 'invalid_json' ? encodedBody(request) : undefined
      throw encoded ?? unreadable(error)
    },
  )
}

/** What is done with a parsed JSON body (see {@link readJson}). */
export type JsonUse<C> = (body: unknown, request: ApiRequest, context: C) => ApiAnswer | Promise<ApiAnswer>

/** A body sent without a type: empty, it is no body (400); one that holds bytes is of no type (415). */
const untyped = (text: string, shape: JsonBodyShape): ApiAnswer => (text === '' ? bodyRequired(shape) : unsupported())

const unsupported = () => new ErrorAnswer(415, 'unsupported_media_type', 'Request body must be application/json')

function unreadable(error: unknown): PetstoreError {
  if (error instanceof PetstoreError) return error
  // The client broke the stream off: its request, not the server, failed.
  return new PetstoreError(400, 'invalid_json', 'Request body could not be read to its end')
}

const failedRead = (error: unknown): never => {
  throw unreadable(error)
}

/** The body's text as JSON (never an ErrorAnswer: JSON holds none), or the 400 for a blank or broken one. */
function jsonOf(text: string, shape: JsonBodyShape): unknown {
  if (text.trim() === '') return bodyRequired(shape)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return new ErrorAnswer(400, 'invalid_json', 'Request body is not valid JSON')
  }
  return withExactIntegers(text, parsed, shape.exactIntegers)
}
