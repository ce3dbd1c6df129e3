/**
 * The one place where an error becomes an answer: a JSON Error body of
 * `code`, `message`, `status` and `details`.
 *
 * @module
 */
import { type ErrorDetail, PetstoreError } from '../shared/petstore-error.js'
import { utf8Length } from '../util/utf8-length.js'
import type { ApiAnswer } from './exchange.js'

/** A 500 that says nothing about its cause. */
const internal = (cause?: unknown) =>
  new PetstoreError(500, 'internal_error', 'The server failed to answer this request', { cause })

/**
 * Whether `error` is a PetstoreError that can be answered as it is. A store
 * can throw anything, even a forged or half-built PetstoreError; those are
 * answered as a plain 500 rather than trusted with the status line.
 */
function isAnswerable(error: unknown): error is PetstoreError {
  try {
    return (
      error instanceof PetstoreError &&
      Number.isInteger(error.status) &&
      error.status >= 400 &&
      error.status <= 599 &&
      typeof error.code === 'string' &&
      typeof error.message === 'string'
    )
  } catch {
    return false // a getter that throws
  }
}

/**
 * The PetstoreError that `error` is answered with: itself when it is one,
 * a generic 500 `internal_error` otherwise, and for a missing driver, whose
 * message (what to install) is the operator's to read, not a client's.
 */
function toPetstoreError(error: unknown): PetstoreError {
  return isAnswerable(error) && !error.options.missingDriver ? error : internal(error)
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

/** The JSON text of an Error body. */
function errorJson(status: number, code: string, message: string, details: ErrorDetail[] | undefined): string {
  const body: { code: string; message: string; status: number; details?: ErrorDetail[] } = { code, message, status }
  if (details) body.details = details
  return JSON.stringify(body)
}

/**
 * A 4xx that the API gives itself (a pet that is not there, a field that fails
 * its check), returned up to the engine instead of thrown. It is its own
 * answer, the same bytes a thrown {@link PetstoreError} of the same status,
 * code, message and details gives. A throw and an `Error` cost more than the
 * whole of such an answer otherwise (bench/README.md). A PetstoreError thrown
 * from a store, or anywhere else, is answered as before.
 *
 * @example
 * ```ts
 * const id = petIdOf(text)
 * if (id instanceof ErrorAnswer) return id // → 400 validation_error naming petId
 * ```
 */
export class ErrorAnswer implements ApiAnswer {
  readonly headers: Record<string, string> = { 'content-type': 'application/json' }
  body: string | null

  constructor(
    readonly status: number,
    readonly code: string,
    readonly message: string,
    readonly details?: ErrorDetail[],
  ) {
    this.body = errorJson(status, code, message, details)
  }
}

function build(known: PetstoreError): ApiAnswer {
  const headers: Record<string, string> = {}
  // Checked one by one, as every runtime would on sending: a header that cannot be sent gives the plain 500.
  for (const [name, value] of Object.entries(known.options?.headers ?? {})) {
    if (typeof value !== 'string' || !HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) {
      throw new TypeError('unsendable header')
    }
    headers[name.toLowerCase()] = value
  }
  headers['content-type'] = 'application/json'
  const body = errorJson(known.status, known.code, known.message, known.options?.details)
  return { status: known.status, headers, body, code: known.code }
}

/**
 * Turns anything thrown into an Error answer. Unknown errors become a
 * generic 500: no message, stack, SQL or key of theirs reaches the client.
 * It never throws: details or headers that cannot be sent also give the 500.
 */
export function errorAnswer(error: unknown): ApiAnswer {
  try {
    return build(toPetstoreError(error))
  } catch {
    return build(internal())
  }
}

/**
 * An Error answer built once and handed out as copies (a fresh header object
 * each, since the caller adds to it): for answers given many times a second,
 * such as the 401 to a request without a key.
 *
 * @example
 * ```ts
 * const notFound = fixedAnswer(new PetstoreError(404, 'not_found', 'No such route'))
 * notFound() // → { status: 404, headers: { 'content-type': 'application/json' }, body: '{"code":…}', code: 'not_found', contentLength: '59' }
 * ```
 */
export function fixedAnswer(error: PetstoreError): () => ApiAnswer {
  const { status, headers, body, code } = errorAnswer(error)
  // Counted once, not per answer: the Node adapter writes it as it is.
  const contentLength = String(utf8Length(body ?? ''))
  const copy = headersCopier(headers)
  return () => ({ status, headers: copy(), body, code, contentLength })
}

/**
 * A fresh copy of `headers` per call. The API's fixed answers carry
 * `content-type` and at most `allow` or `www-authenticate` before it: those
 * are copied as object literals, cheaper than `Object.assign` or a spread
 * (bench/README.md).
 */
function headersCopier(headers: Record<string, string>): () => Record<string, string> {
  const { allow, 'www-authenticate': challenge, 'content-type': type, ...other } = headers
  if (type === undefined || Object.keys(other).length > 0 || (allow !== undefined && challenge !== undefined)) {
    return () => Object.assign({}, headers)
  }
  // Each in the order `build` wrote it: the option's header, then the type.
  if (allow !== undefined) return () => ({ allow, 'content-type': type })
  if (challenge !== undefined) return () => ({ 'www-authenticate': challenge, 'content-type': type })
  return () => ({ 'content-type': type })
}
