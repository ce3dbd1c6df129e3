/**
 * The one error type of the library: thrown by a store, a deadline or the
 * HTTP layer, and turned into an answer in one place (src/http/errors.ts).
 *
 * @module
 */

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
    // cause, with the cause's stack), and capturing one costs more than the whole of a 401.
    const limit = stackTraceLimit(0)
    super(message, { cause: options.cause })
    stackTraceLimit(limit)
  }

  /**
   * The store could not be reached; answered as 503 `unavailable`, with `Retry-After` when
   * `retryAfterSeconds` says when to come back.
   */
  static unavailable(cause?: unknown, retryAfterSeconds?: number): PetstoreError {
    const message = 'The pet store is temporarily unavailable; try again later'
    if (retryAfterSeconds === undefined) return new PetstoreError(503, 'unavailable', message, { cause })
    return new PetstoreError(503, 'unavailable', message, {
      cause,
      headers: { 'retry-after': String(retryAfterSeconds) },
    })
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
