/**
 * The one error type of the library, and the one place where an error
 * becomes a response.
 *
 * @module
 */
import type { ApiAnswer } from '../http/exchange.js'
import { utf8Length } from '../util/utf8-length.js'
import type { ErrorBody } from './schemas.js'

const BRAND = Symbol.for('petstore-server.PetstoreError')

/** A field-level reason attached to a `validation_error`. */
export interface ErrorDetail {
  /** Dotted path of the offending value, e.g. `name` or `query.limit`. */
  path: string
  message: string
}

/** Sets `Error.stackTraceLimit` where the engine has one; returns what it was. */
function stackTraceLimit(limit: number | undefined): number | undefined {
  const errors = Error as { stackTraceLimit?: number }
  const previous = errors.stackTraceLimit
  if (typeof previous === 'number' && limit !== undefined) errors.stackTraceLimit = limit
  return previous
}

/**
 * An error the API answers with. Throw it from anywhere in the handler or a
 * store; it becomes a JSON Error body whose `status` is the HTTP status.
 *
 * @example
 * ```ts
 * throw new PetstoreError(404, 'not_found', 'No pet with id 7')
 * ```
 */
export class PetstoreError extends Error {
  override name = 'PetstoreError'
  /** Marks instances so that `instanceof` holds across duplicate copies (ESM and CJS builds of this package). */
  readonly [BRAND] = true

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }

  constructor(
    /** HTTP status of the response. */
    readonly status: number,
    /** Machine-readable `code` of the Error body. */
    readonly code: string,
    message: string,
    readonly options: {
      details?: ErrorDetail[]
      headers?: Record<string, string>
      cause?: unknown
      /** Set by {@link PetstoreError.missingDriver}: the message alone says what to install. */
      missingDriver?: boolean
    } = {},
  ) {
    // No stack trace: a PetstoreError is an answer, not a fault to trace (a 5xx keeps its
    // cause, with the cause's stack). V8 spends more on capturing one than on the whole
    // of a 401 otherwise; the limit is V8's and JavaScriptCore's, and a no-op elsewhere.
    const limit = stackTraceLimit(0)
    super(message, { cause: options.cause })
    stackTraceLimit(limit)
  }

  /** The store could not be reached; answered as 503 `unavailable`. */
  static unavailable(cause?: unknown): PetstoreError {
    return new PetstoreError(503, 'unavailable', 'The pet store is temporarily unavailable; try again later', { cause })
  }

  /**
   * A store's driver cannot be loaded: a generic 500 to clients, and a
   * `message` (one line, naming what to install) for `onError`, which the
   * binary prints as it is, where for other failures it prints the cause.
   *
   * @example
   * ```ts
   * throw PetstoreError.missingDriver('postgresStore needs pg: npm install pg', cause)
   * ```
   */
  static missingDriver(message: string, cause: unknown): PetstoreError {
    return new PetstoreError(500, 'internal_error', message, { cause, missingDriver: true })
  }
}

/**
 * `error` in one line, its causes after it: `PetstoreError: The pet store is temporarily
 * unavailable… (cause: Error: connect ECONNREFUSED 127.0.0.1:5432)`. The default `onError`
 * writes this, so that a failing database during an outage is a line per request, not a stack.
 */
export function oneLineOf(error: unknown): string {
  const parts: string[] = []
  let current = error
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const { name, message } = (typeof current === 'object' ? current : {}) as { name?: unknown; message?: unknown }
    const text =
      typeof message === 'string' ? `${typeof name === 'string' ? `${name}: ` : ''}${message}` : String(current)
    parts.push(text.replace(/\s*\n\s*/g, ' '))
    current = (current as { cause?: unknown }).cause
  }
  return parts.join(' (cause: ') + ')'.repeat(parts.length - 1)
}

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
  const body: ErrorBody = { code, message, status }
  if (details) body.details = details
  return JSON.stringify(body)
}

/**
 * A 4xx that the API gives itself (a pet that is not there, a field that fails
 * its check), returned up to the engine instead of thrown. It is its own
 * answer, the same bytes a thrown {@link PetstoreError} of the same status,
 * code, message and details gives. V8 spends more on a throw (the exception's
 * message, found by walking the stack, then the unwinding) and on building an
 * `Error` than on the whole of such an answer otherwise: a 404 for a missing
 * pet ran 107.8k instructions a request thrown, 85.5k returned (callgrind,
 * main thread; the yardstick 82.8k). A PetstoreError thrown from a store, or
 * anywhere else, is answered as before.
 *
 * @example
 * ```ts
 * const id = petIdOf(text)
 * if (id instanceof Refusal) return id // → 400 validation_error naming petId
 * ```
 */
export class Refusal implements ApiAnswer {
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
  // Counted once: the Node adapter's count of a 401's body was a call into C++ and a number
  // turned into text per answer (~350 instructions of a 401's 71k, callgrind).
  const contentLength = String(utf8Length(body ?? ''))
  const copy = headersCopier(headers)
  return () => ({ status, headers: copy(), body, code, contentLength })
}

/**
 * A fresh copy of `headers` per call. The API's fixed answers carry
 * `content-type` and at most `allow` or `www-authenticate` before it: those
 * are object literals, which V8 clones from one template, where
 * `Object.assign` walked the source's properties (~600 instructions of a
 * 401, callgrind). Not a spread: V8 gives a spread copy a map that every
 * header added later replaces (3 µs a copy once three are added).
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
