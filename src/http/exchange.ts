/**
 * The request and answer the API works on, whatever carries them. A web
 * `Request` is one (`fromRequest`, web-request.ts); the Node adapter makes one from
 * Node's own request, so that the hot path builds neither a `Request` nor a
 * `Response` (together most of the cost of a small answer on Node).
 *
 * @module
 */

import type { AbortLike } from '../shared/deadline.js'
import { utf8Length } from '../util/utf8-length.js'

/** What the API reads of a request. */
export interface ApiRequest {
  readonly method: string
  /** The absolute URL. */
  readonly url: string
  /**
   * The target as the client sent it, in origin form (`/v1/pets?limit=2`),
   * where the carrier has it and `url` is this target on an authority the
   * URL parser takes. The API then reads the path and query from it, and
   * `url`, built from it, need not be built at all (Node). Absent, they are
   * read from `url`.
   */
  readonly target?: string
  /** A header by its lower-case name; `null` when absent. */
  header(name: string): string | null
  /**
   * The body's chunks, or `null` when the request has none. Leaving the loop
   * early stops reading without destroying the connection, so an answer (a
   * 413) can still be written.
   */
  body(): AsyncIterable<Uint8Array> | null
  /**
   * The whole body at once as UTF-8 text (see `utf8Text`), where the
   * carrier can read it cheaper than through `body()`'s chunks (the Node
   * adapter: no promise per chunk). Called only when `body()` is not
   * `null`, and instead of iterating it. Rejects with the 413
   * `payload_too_large` PetstoreError as soon as more than `maxBytes`
   * arrived, and stops reading without destroying the connection, so the 413
   * can still be written; with the 400 `invalid_json` PetstoreError of
   * `utf8Text` for bytes that are not UTF-8; with a plain `Error` when the
   * client breaks the body off. Text, not bytes: a promise resolved with an
   * object (a byte array) is asked for its `then`; a string is not.
   */
  readText?(maxBytes: number): Promise<string>
  /** Aborts when the client goes away. */
  readonly signal: AbortLike | undefined
  /** The request as a web `Request`, for a `keys` function and `onError`; made on first use. */
  toRequest(): Request
}

/** What the API answers: a status, lower-case headers and a JSON text (or no body). */
export interface ApiAnswer {
  status: number
  headers: Record<string, string>
  body: string | null
  /** The `code` of a JSON Error answer, for `onResponse`; absent on a success. */
  code?: string
  /**
   * `body`'s length in UTF-8 bytes as a decimal text, where it was counted
   * once for an answer given many times (see `fixedAnswer`): a carrier that
   * writes `Content-Length` itself then need not count it again. Only
   * meaningful while `body` is the text it was counted for.
   */
  contentLength?: string
  /** The kind of an injected fault (`withFaults`), for `onResponse`; absent otherwise. */
  fault?: string
  /** Drop the connection without answering, where the carrier can (the Node adapter); else answer as it is. */
  drop?: boolean
}

/**
 * `answer` made HEAD's: GET's headers, `Content-Length` included (RFC 9110, section 9.3.2: a
 * client may size a download by it), and no body. Changes `answer` and returns it.
 *
 * @example
 * ```ts
 * headAnswer(jsonAnswer('{"status":"ok"}')) // → { status: 200, headers: { …, 'content-length': '15' }, body: null }
 * ```
 */
export function headAnswer(answer: ApiAnswer): ApiAnswer {
  if (answer.body !== null) {
    answer.headers['content-length'] = answer.contentLength ?? String(utf8Length(answer.body))
    answer.body = null
  }
  return answer
}

/**
 * An answer still to come: what the engine gives where a handler answered
 * with a promise (a create, on its body; a store that waits). Whoever takes
 * it gets the answer in the reaction that makes it, where a promise would
 * add a turn of the microtask queue before the Node adapter could write it.
 * It is a thenable for every other waiter (`await` works), and never fails:
 * the engine answers every failure, and a taker must not throw.
 */
export class PendingAnswer implements PromiseLike<ApiAnswer> {
  private answer: ApiAnswer | undefined = undefined
  private taker: ((answer: ApiAnswer) => void) | undefined = undefined

  /** Calls `taker` with the answer once it is made (at once if it is), in the reaction that made it. */
  take(taker: (answer: ApiAnswer) => void): void {
    if (this.answer !== undefined) {
      taker(this.answer)
      return
    }
    const before = this.taker
    this.taker =
      before === undefined
        ? taker
        : (answer) => {
            before(answer)
            taker(answer)
          }
  }

  /** The answer is made: every taker gets it now. */
  give(answer: ApiAnswer): void {
    this.answer = answer
    const { taker } = this
    this.taker = undefined
    taker?.(answer)
  }

  /** The answer with `step` run on it, to come as this one comes. */
  map(step: (answer: ApiAnswer) => ApiAnswer): PendingAnswer {
    const next = new PendingAnswer()
    this.take((answer) => next.give(step(answer)))
    return next
  }

  // biome-ignore lint/suspicious/noThenProperty: it is meant to be awaited like a promise
  then<A = ApiAnswer, B = never>(
    onFulfilled?: ((answer: ApiAnswer) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return new Promise<ApiAnswer>((resolve) => this.take(resolve)).then(onFulfilled, onRejected)
  }
}

/**
 * The API over {@link ApiRequest}s. It never throws or rejects: every failure
 * is an answer. An answer known at once (a 401, most errors, a page of a store
 * that answers synchronously) is returned as it is, not wrapped in a promise:
 * on the Node adapter it is then written without a trip through the
 * microtask queue. One that waits comes as a {@link PendingAnswer}.
 */
export type Engine = (request: ApiRequest) => ApiAnswer | PendingAnswer

/**
 * Whether an engine's result is still to come: a {@link PendingAnswer}, this copy's or that of
 * another copy of the package (its CommonJS build beside the ESM one), which is awaited instead.
 */
export const isPending = (result: ApiAnswer | PromiseLike<ApiAnswer>): result is PromiseLike<ApiAnswer> =>
  typeof (result as PromiseLike<ApiAnswer>).then === 'function'

/** Where a fetch handler made by this package keeps its engine, for adapters that can use it directly. */
export const ENGINE = Symbol.for('petstore-server.engine')

/** The engine behind `handler`, when `handler` is this package's own. */
export function engineOf(handler: unknown): Engine | undefined {
  const engine = (handler as { [ENGINE]?: unknown } | null)?.[ENGINE]
  return typeof engine === 'function' ? (engine as Engine) : undefined
}

/**
 * Adds `value` to a header that may be set already, as `Headers.append`
 * would (`link` and `vary` can carry several values).
 */
export function appendHeader(headers: Record<string, string>, name: string, value: string): void {
  const present = headers[name]
  headers[name] = present === undefined ? value : `${present}, ${value}`
}

/** A JSON answer. */
export const jsonAnswer = (body: string, status = 200, headers: Record<string, string> = {}): ApiAnswer => {
  headers['content-type'] = 'application/json'
  return { status, headers, body }
}
