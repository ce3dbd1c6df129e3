/**
 * The request and answer the API works on, whatever carries them. A web
 * `Request` is one (`fromRequest`); the Node adapter makes one straight from
 * Node's own request, so that the hot path builds neither a `Request` nor a
 * `Response` (together most of the cost of a small answer on Node).
 *
 * @module
 */

import { utf8Length } from '../util/utf8-length.js'
import { readLimited, tooLarge, utf8Text } from './body.js'
import type { FetchHandler } from './fetch-handler.js'

/** The signal of a client going away: an `AbortSignal`, or anything as small that behaves like one. */
export interface AbortLike {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: (event: unknown) => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: (event: unknown) => void): void
}

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
   * object (a byte array) is asked for its `then`, a walk up its prototypes
   * (callgrind: ~300 instructions a lookup); a string is not.
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
 * An answer still to come, handed to whoever takes it in the same reaction
 * that makes it: what the engine gives for a create, whose answer is made in
 * the reaction to its body's read. A promise there was one more promise, one
 * more turn of the microtask queue and a lookup of `then` on the answer (a
 * walk up to `Object.prototype`) before the Node adapter could write it
 * (callgrind's profile: ~600 of a create's ~91,000 instructions). It is a
 * thenable for every other waiter (`await` works). It never fails: the
 * engine answers every failure, and a taker must not throw.
 */
export class AnswerToCome implements PromiseLike<ApiAnswer> {
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
  map(step: (answer: ApiAnswer) => ApiAnswer): AnswerToCome {
    const next = new AnswerToCome()
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
 * on the Node adapter a refusal is then written without a trip through the
 * microtask queue. One that waits on a body comes as an {@link AnswerToCome}.
 */
export type Engine = (request: ApiRequest) => ApiAnswer | Promise<ApiAnswer> | AnswerToCome

/** Whether an engine's result is still to come. */
export const pending = (
  result: ApiAnswer | Promise<ApiAnswer> | AnswerToCome,
): result is Promise<ApiAnswer> | AnswerToCome => typeof (result as Promise<ApiAnswer>).then === 'function'

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

/** The chunks of a web stream; leaving early releases the stream rather than cancelling it. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

/** The declared `Content-Length` of `request`; `NaN` when absent or not decimal. */
function declaredLength(request: Request): number {
  const declared = request.headers.get('content-length')
  return declared !== null && /^[0-9]+$/.test(declared) ? Number(declared) : Number.NaN
}

/**
 * A web `Request` as the API reads it. What the API may not need is read from
 * the request only when asked: under `@hono/node-server`, `request.body`
 * turns its light request into a full web `Request` (stream, headers,
 * signal), and `request.signal` makes an `AbortController`. A class, not an
 * object literal with getters (see `NodeApiRequest` in adapters/node/request.ts).
 */
class WebApiRequest implements ApiRequest {
  readonly method: string
  readonly url: string

  constructor(private readonly request: Request) {
    this.method = request.method
    this.url = request.url
  }

  get signal(): AbortLike {
    return this.request.signal
  }

  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  body(): AsyncIterable<Uint8Array> | null {
    const { request } = this
    // A positive declared length means a body: its chunks are made only if they are read.
    if (declaredLength(request) > 0) return { [Symbol.asyncIterator]: () => chunksOf(request.body as ReadableStream) }
    return request.body === null ? null : chunksOf(request.body)
  }

  readText(maxBytes: number): Promise<string> {
    const { request } = this
    // Within the limit, the body is taken whole, the carrier's own way: HTTP framing bounds it to its
    // declared length. Without one (chunked), the chunks are counted as they come.
    const length = declaredLength(request)
    if (!(length > 0 && length <= maxBytes)) {
      return readLimited(request.body === null ? [] : chunksOf(request.body), maxBytes).then(utf8Text)
    }
    return request.arrayBuffer().then((buffer) => {
      if (buffer.byteLength > maxBytes) throw tooLarge(maxBytes)
      return utf8Text(new Uint8Array(buffer))
    })
  }

  toRequest(): Request {
    return this.request
  }
}

/** A web `Request` as the API reads it. */
export const fromRequest = (request: Request): ApiRequest => new WebApiRequest(request)

/** An answer as a web `Response`. */
export function toResponse({ status, headers, body }: ApiAnswer): Response {
  return new Response(body, { status, headers })
}

/** How much of a body left unread is read and dropped before its answer goes, at most. */
const DRAIN_BYTES = 1024 * 1024
const DRAIN_MS = 2_000
/**
 * Only workerd resets a connection whose request body was left unread; elsewhere the
 * handler stops reading at the limit, and the carrier (Node's lingering close) does the rest.
 */
const DRAINS = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers'

/**
 * Reads what is left of `request`'s body, up to {@link DRAIN_BYTES} and
 * {@link DRAIN_MS}, then cancels the rest: a client still writing its body
 * when workerd resets the connection loses the answer sent first (a 413, a
 * 401 to an upload).
 */
async function drain(request: Request): Promise<void> {
  const { body } = request
  if (body === null || body.locked) return
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = body.getReader()
  } catch {
    return
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), DRAIN_MS)
  })
  try {
    for (let read = 0; read <= DRAIN_BYTES; ) {
      const chunk = await Promise.race([reader.read(), late])
      if (chunk === 'late' || chunk.done) break
      read += chunk.value.byteLength
    }
    await reader.cancel()
  } catch {
    // The client broke the body off: there is nothing left to read.
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A fetch handler over `engine`, carrying it under {@link ENGINE} so that an
 * adapter of this package can skip the `Request`/`Response` round trip.
 */
export function toFetchHandler(engine: Engine): FetchHandler & { [ENGINE]: Engine } {
  const handler = async (request: Request) => {
    const answer = await engine(fromRequest(request))
    // A body the answer did not need (refused before or while reading it) is drained first.
    if (DRAINS && answer.status >= 400 && request.method !== 'GET' && request.method !== 'HEAD') {
      await drain(request)
    }
    return toResponse(answer)
  }
  return Object.assign(handler, { [ENGINE]: engine })
}
