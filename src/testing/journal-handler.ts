/**
 * `withJournal(handler, journal)`: a handler of `createPetstore` that records
 * each request it answers into a {@link Journal}, and serves the journal at
 * `{prefix}/__petstore/requests`. The body is recorded as the API reads it
 * (a tee of its read), never read on the journal's behalf.
 *
 * @module
 */
import { bearerToken } from '../api/auth.js'
import { normalizeBasePath, trimSlashes } from '../http/base-path.js'
import { type ApiEngine, apiEngineOf, routeOf } from '../http/engine.js'
import { ErrorAnswer } from '../http/errors.js'
import { type ApiAnswer, type ApiRequest, type Engine, jsonAnswer, PendingAnswer } from '../http/exchange.js'
import { type FetchHandler, toFetchHandler } from '../http/fetch-handler.js'
import { targetOf } from '../http/observe.js'
import type { Route, RoutedRequest } from '../http/route-table.js'
import { sha256Hex } from '../util/sha256.js'
import { type Journal, type JournalEntry, type JournalReader, parseJournalQuery } from './journal.js'

/** Options of {@link withJournal}. */
export interface WithJournalOptions {
  /** What comes before `/__petstore/requests`: `''`, or a namespace's `/ns/NAME`. @default '' */
  prefix?: string | undefined
  /** Where the routes' reads and clears go. The binary's gathers every worker's journal. @default journal */
  reader?: JournalReader | undefined
}

/** Header text kept per entry, names and values: past it, headers are left out and `headersTruncated` set. */
const HEADER_BYTES = 16 * 1024
/** Path and query kept per entry. */
const PATH_CHARS = 8 * 1024
const REDACTED = new Set(['authorization', 'proxy-authorization'])

/**
 * `handler` (of `createPetstore`, or `withDocs` over one) recording into
 * `journal` every request to its API and to `{prefix}/__petstore/…`, but the
 * journal's own, and serving, with a key:
 * - `GET {prefix}/__petstore/requests`: `{ requests, evicted }`, filtered by the query;
 * - `GET {prefix}/__petstore/requests/count`: `{ count, evicted }`, the same filters;
 * - `DELETE {prefix}/__petstore/requests`: clears the journal.
 *
 * `Authorization` is recorded as `[redacted]`; `keyId` says which key was
 * sent. A body is recorded as far as the API read it, up to the journal's cap.
 *
 * @example
 * ```ts
 * import { createPetstore, memoryStore } from 'petstore-server'
 * import { Journal, withJournal } from 'petstore-server/testing'
 *
 * const journal = new Journal()
 * const handler = withJournal(createPetstore({ store: memoryStore(), keys: ['test-key'] }), journal)
 * const auth = { authorization: 'Bearer test-key' }
 * await handler(new Request('http://test/v1/pets', { headers: auth }))
 * const page = await handler(new Request('http://test/__petstore/requests?operation=listPets', { headers: auth }))
 * await page.json() // → { requests: [{ id: …, method: 'GET', path: '/v1/pets', status: 200, … }], evicted: 0 }
 * ```
 */
export function withJournal(handler: FetchHandler, journal: Journal, options: WithJournalOptions = {}): FetchHandler {
  const engine = apiEngineOf('withJournal', handler)
  const prefix = normalizeBasePath('withJournal', options.prefix ?? '')
  const own = `${prefix}/__petstore/requests`
  const routes = journalRoutes(own, options.reader ?? journal)
  return toFetchHandler(recording(engine.withRoutes(routes), journal, prefix, own))
}

/** The journal's own routes, at `own`: answered by `reader`, recorded by no one. */
function journalRoutes(own: string, reader: JournalReader): Route[] {
  const read = <T>(request: RoutedRequest, get: (filter: object) => T | Promise<T>) => {
    const parsed = parseJournalQuery(request.parsed.query)
    if ('problem' in parsed) {
      const { path, message } = parsed.problem
      return new ErrorAnswer(400, 'validation_error', `${path}: ${message}`, [{ path, message }])
    }
    return answerOf(get(parsed.filter), (value) => jsonAnswer(JSON.stringify(value)))
  }
  return [
    { method: 'GET', path: own, handler: (request) => read(request, (filter) => reader.requests(filter)) },
    { method: 'DELETE', path: own, handler: () => answerOf(reader.clear(), noContent) },
    { method: 'GET', path: `${own}/count`, handler: (request) => read(request, (filter) => reader.count(filter)) },
  ]
}

const noContent = (): ApiAnswer => ({ status: 204, headers: {}, body: null })

/** `make` of `value`, at once when `value` is not a promise. */
function answerOf<T>(value: T | Promise<T>, make: (value: T) => ApiAnswer): ApiAnswer | Promise<ApiAnswer> {
  return value instanceof Promise ? value.then(make) : make(value)
}

/** `inner` recording into `journal` what it answers under its base path and `{prefix}/__petstore/`, `own` aside. */
function recording(inner: ApiEngine, journal: Journal, prefix: string, own: string): ApiEngine {
  const { basePath } = inner
  const control = `${prefix}/__petstore/`
  const recorded = (path: string) =>
    path === basePath ||
    path.startsWith(`${basePath}/`) ||
    (path.startsWith(control) && path !== own && path !== `${own}/count`)
  const engine: Engine = (request) => {
    const target = request.target ?? targetOf(request.url)
    const query = target.indexOf('?')
    if (!recorded(trimSlashes(query < 0 ? target : target.slice(0, query)))) return inner(request)
    const started = performance.now()
    const tee = new RecordingRequest(request, journal.bodyBytes)
    const record = (answer: ApiAnswer) => {
      try {
        journal.record(entryOf(tee, target, answer, started))
      } catch {
        // A journal that cannot record must not change the answer.
      }
      return answer
    }
    const result = inner(tee)
    return result instanceof PendingAnswer ? result.map(record) : record(result)
  }
  return Object.assign(engine, {
    basePath,
    withRoutes: (routes: readonly Route[]) => recording(inner.withRoutes(routes), journal, prefix, own),
    mapRoutes: (map: (route: Route) => Route) => recording(inner.mapRoutes(map), journal, prefix, own),
  })
}

/** The entry of `request`, answered with `answer`. */
function entryOf(request: RecordingRequest, target: string, answer: ApiAnswer, started: number) {
  const operation = routeOf(request)?.operation ?? null
  const { body, bodyTruncated } = request.recordedBody()
  const entry: Omit<JournalEntry, 'id'> = {
    time: new Date(performance.timeOrigin + started).toISOString(),
    method: request.method,
    path: target.length > PATH_CHARS ? fresh(target.slice(0, PATH_CHARS)) : target,
    operation,
    status: answer.status,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    headers: {},
    body,
    bodyTruncated,
  }
  const { headers, truncated } = headersOf(request.inner)
  entry.headers = headers
  if (truncated) entry.headersTruncated = true
  const token = bearerToken(request.inner.header('authorization'))
  if (token !== undefined) entry.keyId = sha256Hex(token).slice(0, 8)
  const petId = operation !== null && answer.status < 300 ? petIdOf(answer.body) : undefined
  if (petId !== undefined) entry.petId = petId
  if (answer.fault !== undefined) entry.fault = answer.fault
  return entry
}

/** The request's headers, credentials redacted, up to {@link HEADER_BYTES}. */
function headersOf(request: ApiRequest): { headers: Record<string, string>; truncated: boolean } {
  const headers: Record<string, string> = {}
  let left = HEADER_BYTES
  for (const [name, value] of request.toRequest().headers) {
    const kept = REDACTED.has(name) ? '[redacted]' : value
    left -= name.length + kept.length
    if (left < 0) return { headers, truncated: true }
    headers[name] = kept
  }
  return { headers, truncated: false }
}

/** The `id` of a pet answer's JSON object, if it has one. */
function petIdOf(body: string | null): number | undefined {
  if (body === null || body.charCodeAt(0) !== 123) return undefined
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id
    return typeof id === 'number' ? id : undefined
  } catch {
    return undefined
  }
}

/** A copy of `text` that holds no part of a larger string (V8 keeps a slice's parent alive). */
const fresh = (text: string): string => JSON.parse(JSON.stringify(text)) as string

/** `text` cut to `maxBytes` of UTF-8, at a character's end, and whether it was cut. */
function capped(text: string, maxBytes: number): { body: string; bodyTruncated: boolean } {
  // Within the cap even at 3 bytes a UTF-16 unit: no need to count.
  if (text.length * 3 <= maxBytes) return { body: text, bodyTruncated: false }
  const bytes = new Uint8Array(maxBytes)
  const { read, written } = new TextEncoder().encodeInto(text, bytes)
  if (read === text.length) return { body: text, bodyTruncated: false }
  return { body: new TextDecoder().decode(bytes.subarray(0, written)), bodyTruncated: true }
}

/** Bytes of a body as they pass, up to a cap, for a request read by chunks rather than `readText`. */
class ChunkTee {
  readonly #chunks: Uint8Array[] = []
  #kept = 0
  #total = 0
  complete = false

  constructor(readonly maxBytes: number) {}

  add(chunk: Uint8Array): void {
    this.#total += chunk.byteLength
    const room = this.maxBytes - this.#kept
    if (room <= 0) return
    const part = chunk.byteLength <= room ? chunk.slice() : chunk.slice(0, room)
    this.#chunks.push(part)
    this.#kept += part.byteLength
  }

  text(): { body: string; bodyTruncated: boolean } {
    const bytes = new Uint8Array(this.#kept)
    let offset = 0
    for (const chunk of this.#chunks) {
      bytes.set(chunk, offset)
      offset += chunk.byteLength
    }
    // A cut may split a character: decoded leniently, and marked as cut anyway.
    const body = new TextDecoder().decode(bytes)
    return { body, bodyTruncated: !this.complete || this.#total > this.#kept }
  }
}

async function* teed(source: AsyncIterable<Uint8Array>, tee: ChunkTee): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    tee.add(chunk)
    yield chunk
  }
  tee.complete = true
}

/**
 * The request as the API gets it, remembering what the API read of its body:
 * the text `readText` gave, or the chunks `body()` gave. Everything else is
 * the request's own. The engine notes its route on this object.
 */
class RecordingRequest implements ApiRequest {
  readonly method: string
  readonly target: string | undefined
  readonly readText: ((maxBytes: number) => Promise<string>) | undefined
  #text: string | undefined
  #failed = false
  #tee: ChunkTee | undefined

  constructor(
    readonly inner: ApiRequest,
    private readonly maxBytes: number,
  ) {
    this.method = inner.method
    this.target = inner.target
    const readText = inner.readText
    this.readText =
      readText === undefined
        ? undefined
        : (max) =>
            readText.call(inner, max).then(
              (text) => {
                this.#text = text
                return text
              },
              (error: unknown) => {
                this.#failed = true
                throw error
              },
            )
  }

  get url(): string {
    return this.inner.url
  }

  get signal() {
    return this.inner.signal
  }

  header(name: string): string | null {
    return this.inner.header(name)
  }

  body(): AsyncIterable<Uint8Array> | null {
    const body = this.inner.body()
    // A request read through readText is never iterated (the Node adapter's body() throws if it is).
    if (body === null || this.readText !== undefined) return body
    const tee = new ChunkTee(this.maxBytes)
    this.#tee = tee
    return { [Symbol.asyncIterator]: () => teed(body, tee) }
  }

  toRequest(): Request {
    return this.inner.toRequest()
  }

  /** The body as recorded: what was read, cut at the cap; `''` and cut for one sent and not read. */
  recordedBody(): { body: string | null; bodyTruncated: boolean } {
    if (this.#text !== undefined) return capped(this.#text, this.maxBytes)
    if (this.#failed) return { body: '', bodyTruncated: true }
    if (this.#tee !== undefined) return this.#tee.text()
    const length = this.inner.header('content-length')
    if (length === '0') return { body: '', bodyTruncated: false }
    // Node's requests say so in their headers; a web Request built in a test may only have a stream.
    const sent =
      (length !== null && length !== '') ||
      this.inner.header('transfer-encoding') !== null ||
      (this.method !== 'GET' && this.method !== 'HEAD' && this.inner.toRequest().body !== null)
    return sent ? { body: '', bodyTruncated: true } : { body: null, bodyTruncated: false }
  }
}
