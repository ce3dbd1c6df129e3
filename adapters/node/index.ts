/**
 * Mounting a fetch handler on Node's `node:http`, through `@whatwg-node/server`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import type { createServerAdapter } from '@whatwg-node/server'
import { errorAnswer, oneLineOf, PetstoreError } from '../../src/api/errors.js'
import { tooLarge, utf8Text } from '../../src/http/body.js'
import {
  type AbortLike,
  AnswerToCome,
  type ApiAnswer,
  type ApiRequest,
  type Engine,
  engineOf,
  pending,
  toResponse,
} from '../../src/http/exchange.js'
import { setDefaults } from '../../src/http/headers.js'
import type { OnResponse } from '../../src/http/observe.js'
import { authorityParses } from '../../src/http/request-target.js'
import { checkServeOptions, MAX_TIMER_MS, optionalFunction, shown, wholeNumber } from '../../src/util/option-checks.js'
import { guardConnections } from './connection-guard.js'
import { ownRequestId, tellOwn } from './own-answers.js'

/**
 * Answers to `Expect: 100-continue` whose `100 Continue` is not sent yet: it
 * is, once the API starts reading the body (see {@link serve}).
 */
const awaitingContinue = new WeakSet<ServerResponse>()

/** Any web-standard fetch handler, such as the one `createPetstore` returns. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

/** A Node request listener: for `http.createServer`, Express `app.use`, or any connect-style stack. */
export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Turns a fetch handler into a Node request listener. Under Express, the full
 * original URL (`req.originalUrl`) is what the handler sees, so mounted at
 * `app.use('/api', …)` it needs `basePath: '/api/v1'`.
 *
 * Any fetch handler goes through `@whatwg-node/server`. The handler that
 * `createPetstore` returns is driven directly instead: Node's request is
 * read as it is and the answer written with `writeHead`/`end`, because
 * building a `Request` and a `Response` for each call cost more than the
 * API's own work (profiled: about half the time of a list). The answers are
 * the same either way; the tests run both.
 *
 * @example
 * ```ts
 * app.use('/api', toNodeListener(createPetstore({ store, keys, basePath: '/api/v1' })))
 * ```
 */
export function toNodeListener(handler: FetchHandler): NodeListener {
  if (typeof handler !== 'function') {
    throw new TypeError(`toNodeListener: handler must be a fetch handler, (request) => Response; got ${shown(handler)}`)
  }
  const engine = engineOf(handler)
  let adapter: NodeListener | undefined
  // Another handler needs the adapter for its first request: loading starts now, not then.
  if (!engine) whatwgAdapter()
  const adapted: NodeListener = (request, response) => {
    // A handler of its own reads the body as it likes: it gets the 100 Continue at once, as from Node.
    if (awaitingContinue.delete(response)) response.writeContinue()
    // @whatwg-node builds the Request from `headers`, which hold the first Authorization only.
    const { authorization } = request.headers
    if (authorization !== undefined) request.headers.authorization = allAuthorization(request.rawHeaders, authorization)
    const { socket } = request
    response.once('finish', () => {
      if (!request.complete) lingerThenClose(request, socket)
    })
    if (adapter !== undefined) return adapter(request, response)
    whatwgAdapter().then(
      (createServerAdapter) => {
        adapter ??= createServerAdapter((request: Request) => answered(handler, request)) as unknown as NodeListener
        adapter(request, response)
      },
      (error: unknown) => {
        console.error(`petstore-server/node: @whatwg-node/server failed to load: ${oneLineOf(error)}`)
        send(request, response, lastResort())
      },
    )
  }
  return engine ? engineListener(engine, adapted) : adapted
}

/**
 * `@whatwg-node/server`'s `createServerAdapter`, imported on first use: our own handler never
 * needs it but for a body a middleware has already read. Merely loaded, never called, its fetch
 * ponyfill made each request of a plain node:http server in the same process cost ~2% more CPU
 * (the hand-written yardstick with it imported, at once: 1.017 ± 0.006 against 0.994 ± 0.004
 * for an empty import; bench/README.md, "At once").
 */
let whatwg: Promise<typeof createServerAdapter> | undefined
const whatwgAdapter = () => {
  if (whatwg === undefined) {
    whatwg = import('@whatwg-node/server').then((loaded) => loaded.createServerAdapter)
    // Loaded ahead of a request, a failure is told to that request: until then it is no unhandled rejection.
    whatwg.catch(() => {})
  }
  return whatwg
}

/**
 * What another fetch handler answers, or a JSON 500 where it throws, rejects or gives no
 * `Response`: @whatwg-node/server would send the error's message and stack to the client, or
 * never answer. The failure goes to stderr, as `createPetstore`'s default `onError` does.
 */
async function answered(handler: FetchHandler, request: Request): Promise<Response> {
  let failure: unknown
  try {
    const response = await handler(request)
    // Not `instanceof`: a Response of another implementation (a ponyfill's) is as good.
    if (typeof (response as Response | undefined)?.status === 'number' && response.headers) return response
    failure = new TypeError(`the handler gave ${shown(response)}, not a Response`)
  } catch (error) {
    failure = error
  }
  console.error(`petstore-server/node: ${request.method} ${request.url} failed: ${oneLineOf(failure)}`)
  return toResponse(lastResort())
}

/** A host name, IPv4 or bracketed IPv6 address, with an optional port: what a `Host` header may say. */
const HOST = /^(?:[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/

/** The request target as sent. Express strips its mount path from `url` and keeps the whole in `originalUrl`. */
const rawTarget = (request: IncomingMessage): string =>
  (request as IncomingMessage & { originalUrl?: string }).originalUrl ?? request.url ?? '/'

/** The request's absolute URL. A `Host` that is no host name is not trusted into it. */
function urlOf(request: IncomingMessage): string {
  const target = rawTarget(request)
  if (!target.startsWith('/')) return target // absolute-form (`GET http://host/path`), or `*`
  const host = request.headers.host
  const scheme = (request.socket as TLSSocket).encrypted ? 'https' : 'http'
  return `${scheme}://${host !== undefined && saneHost(host) ? host : 'localhost'}${target}`
}

/**
 * The target in origin form, when the URL built from it will parse: its
 * `Host` is absent or no host name (then `localhost` stands in), or one the
 * URL parser takes. A name-shaped `Host` it refuses (a port past 65535) gets
 * none, so that the API parses the URL and answers it as malformed.
 */
function originTarget(request: IncomingMessage): string | undefined {
  const target = rawTarget(request)
  if (!target.startsWith('/')) return undefined
  const host = request.headers.host
  return host === undefined || host === lastParsedHost || !saneHost(host) || parsesAsHost(host) ? target : undefined
}

/** The last `Host` found sane: clients send the same one, request after request. */
let lastSaneHost = ''
const saneHost = (host: string): boolean => {
  if (host === lastSaneHost) return true
  if (!HOST.test(host)) return false
  lastSaneHost = host
  return true
}

/** The last sane `Host` the URL parser took, by the rule `parseTarget` applies. */
let lastParsedHost = ''
const parsesAsHost = (host: string): boolean => {
  if (!authorityParses(`http://${host}`)) return false
  lastParsedHost = host
  return true
}

/**
 * The body's chunks as they arrive. Leaving the loop early removes the
 * listeners and pauses the stream: Node's own async iterator would destroy
 * the socket, and with it the answer (a 413) not yet written.
 */
function bodyOf(request: IncomingMessage): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const chunks: Buffer[] = []
      let ended = false
      let failure: Error | undefined
      let wake: (() => void) | undefined
      const notify = () => {
        wake?.()
        wake = undefined
      }
      const onData = (chunk: Buffer) => {
        chunks.push(chunk)
        notify()
      }
      const onEnd = () => {
        ended = true
        notify()
      }
      const onError = (error: Error) => {
        failure = error
        notify()
      }
      const onClose = () => {
        if (!ended) failure ??= new Error('the client closed the connection before the body ended')
        notify()
      }
      const stop = () => {
        request.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose)
        request.pause()
      }
      request.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose)
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          while (chunks.length === 0 && !ended && failure === undefined) {
            await new Promise<void>((resolve) => {
              wake = resolve
            })
          }
          const chunk = chunks.shift()
          if (chunk !== undefined) return { done: false, value: chunk }
          stop()
          if (failure !== undefined) throw failure
          return { done: true, value: undefined }
        },
        async return(): Promise<IteratorResult<Uint8Array>> {
          stop()
          return { done: true, value: undefined }
        },
      }
    },
  }
}

/** Where a request read whole keeps its {@link BodyRead}, for the listeners every request shares. */
const READING = Symbol('petstore-server.body-read')
type Reading = IncomingMessage & { [READING]?: BodyRead | undefined }

/**
 * One body read whole ({@link NodeApiRequest.readText}). The listeners are
 * module-level functions shared by every request, so a read costs this one
 * object (a class: one hidden class, see {@link NodeApiRequest}) and one promise,
 * where `bodyOf` costs six closures, an iterator and a promise per chunk.
 */
class BodyRead {
  /** The first chunk, kept as it is: a small body arrives in one. */
  first: Buffer | undefined = undefined
  /** Every chunk, once a second one has come. */
  chunks: Buffer[] | undefined = undefined
  size = 0

  constructor(
    readonly maxBytes: number,
    readonly resolve: (text: string) => void,
    readonly reject: (error: Error) => void,
  ) {}
}

/**
 * Ends a read that stops early (413, a broken-off body): the listeners off and the stream paused, as
 * `bodyOf` leaves it, so the socket lives on and the answer can still be written.
 */
function stopReading(request: Reading): BodyRead {
  const read = request[READING] as BodyRead
  request[READING] = undefined
  request.off('data', onBodyData).off('end', onBodyEnd).off('close', onBodyClose)
  request.pause()
  return read
}

function onBodyData(this: Reading, chunk: Buffer): void {
  const read = this[READING] as BodyRead
  read.size += chunk.byteLength
  // Stop at once: an oversized upload is never held, and the 413 can still be written.
  if (read.size > read.maxBytes) stopReading(this).reject(tooLarge(read.maxBytes))
  else if (read.first === undefined) read.first = chunk
  else if (read.chunks === undefined) read.chunks = [read.first, chunk]
  else read.chunks.push(chunk)
}

/**
 * The body is in. The listeners stay: nothing more comes through them but a 'close', which finds no
 * read and returns, and taking them off and pausing cost a create 0.15 µs (measured).
 */
function onBodyEnd(this: Reading): void {
  const read = this[READING] as BodyRead
  this[READING] = undefined
  const bytes = read.chunks !== undefined ? Buffer.concat(read.chunks, read.size) : (read.first ?? new Uint8Array(0))
  let text: string
  try {
    text = utf8Text(bytes)
  } catch (error) {
    read.reject(error as Error)
    return
  }
  read.resolve(text)
}

/**
 * Before 'end', the client broke the body off (or its framing broke); after it, the request is
 * merely done. No 'error' listener: Node's request emits 'error' only to a listener, and its
 * 'close' follows either way; one listener fewer per create (~300 instructions, callgrind).
 */
function onBodyClose(this: Reading): void {
  if (this[READING] !== undefined) {
    stopReading(this).reject(new Error('the client closed the connection before the body ended'))
  }
}

/** Node's headers as a web `Headers`, repeated ones kept. */
function webHeaders(request: IncomingMessage): Headers {
  const headers = new Headers()
  const raw = request.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string)
  return headers
}

/**
 * Whether a raw header name is `lower` in any case. The common spellings are compared first:
 * `toLowerCase()` allocates a string, and these scans run on every request.
 */
function isNamed(name: string, lower: string, capitalized: string): boolean {
  return name === capitalized || name === lower || (name.length === lower.length && name.toLowerCase() === lower)
}

/**
 * Every `Authorization` field joined with `, `, as a web `Request` joins them,
 * so that the API sees a repeated one (and refuses it): Node's `headers` keeps
 * only the first, where a proxy in front may have read the last.
 */
function allAuthorization(raw: readonly string[], first: string): string {
  let joined: string | undefined
  let seen = 0
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string
    if (isNamed(name, 'authorization', 'Authorization') && ++seen > 1) {
      joined = `${joined ?? first}, ${raw[i + 1]}`
    }
  }
  return joined ?? first
}

/**
 * Node's request as the API reads it, without copying it into a `Request`
 * unless one is asked for. It is its own body's iterable, so that `body()`
 * allocates nothing when only asked whether there is one, and its own abort
 * signal (the client going away before its answer is written): listeners go
 * on the response only while someone listens, so a request that waits on
 * nothing pays for no `AbortController`, nor for a second object.
 *
 * A class, not an object literal with getters: V8 makes such a literal a
 * dictionary-mode object whose accessor pair is allocated in old space, and
 * from there it kept each request's young objects alive through scavenges
 * until a full collection. Under load every scavenge copied megabytes and a
 * full collection ran four times a second (profiled: 23% of the server's CPU
 * in GC, against 4% for a hand-written node:http server). test/request-shape
 * checks that these objects stay fast.
 */
class NodeApiRequest implements ApiRequest, AbortLike, AsyncIterable<Uint8Array> {
  readonly method: string
  readonly target: string | undefined
  private absolute: string | undefined = undefined
  private asRequest: Request | undefined = undefined
  private listeners: Map<(event: unknown) => void, () => void> | undefined = undefined

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
  ) {
    this.method = request.method ?? 'GET'
    this.target = originTarget(request)
  }

  get signal(): AbortLike {
    return this
  }

  get aborted(): boolean {
    return this.request.socket.destroyed && !this.response.writableFinished
  }

  addEventListener(_type: 'abort', listener: (event: unknown) => void): void {
    const onClose = () => {
      this.listeners?.delete(listener)
      if (!this.response.writableFinished) listener(undefined)
    }
    this.listeners ??= new Map()
    this.listeners.set(listener, onClose)
    this.response.once('close', onClose)
  }

  removeEventListener(_type: 'abort', listener: (event: unknown) => void): void {
    const onClose = this.listeners?.get(listener)
    if (onClose === undefined) return
    this.listeners?.delete(listener)
    this.response.off('close', onClose)
  }

  /** Built when asked: the API reads `target` (profiled: building the URL and splitting it again cost 0.2 µs). */
  get url(): string {
    if (this.absolute === undefined) this.absolute = urlOf(this.request)
    return this.absolute
  }

  header(name: string): string | null {
    const value = this.request.headers[name]
    if (value === undefined) return null
    if (name === 'authorization') return allAuthorization(this.request.rawHeaders, value as string)
    return Array.isArray(value) ? value.join(', ') : value
  }

  body(): AsyncIterable<Uint8Array> | null {
    // As @whatwg-node/server does: every method but GET and HEAD has a body, if only an empty one (which
    // readJson tells from a body without a type by reading it).
    return this.method === 'GET' || this.method === 'HEAD' ? null : this
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    this.continue()
    return bodyOf(this.request)[Symbol.asyncIterator]()
  }

  readText(maxBytes: number): Promise<string> {
    this.continue()
    const request = this.request as Reading
    const read = new Promise<string>((resolve, reject) => {
      request[READING] = new BodyRead(maxBytes, resolve, reject)
    })
    request.on('data', onBodyData).on('end', onBodyEnd).on('close', onBodyClose)
    return read
  }

  /** The 100 goes out when reading begins: after the checks of type and declared length, not before. */
  private continue(): void {
    if (awaitingContinue.delete(this.response)) this.response.writeContinue()
  }

  toRequest(): Request {
    // Only a `keys` function and `onError` ask; neither gets the body, which the API reads itself.
    if (this.asRequest === undefined) {
      const headers = webHeaders(this.request)
      try {
        this.asRequest = new Request(this.url, { method: this.method, headers })
      } catch {
        // A method no Request can carry (CONNECT, TRACE, TRACK) is shown as GET.
        this.asRequest = new Request(this.url, { headers })
      }
    }
    return this.asRequest
  }
}

const LAST_RESORT = JSON.stringify({
  code: 'internal_error',
  message: 'The server failed to answer this request',
  status: 500,
})

const lastResort = (): ApiAnswer => ({
  status: 500,
  headers: { 'content-type': 'application/json' },
  body: LAST_RESORT,
})

/**
 * Whether a body may follow the head: HTTP/1.1 has one only when
 * `Content-Length` (not 0) or `Transfer-Encoding` says so. An answer written
 * at once (a 401) goes out before Node has marked even a bodiless request
 * complete, and needs no drain for it.
 */
function mayHaveBody(request: IncomingMessage): boolean {
  const { headers } = request
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0'
}

/**
 * Writes an answer. A header Node refuses (never one of the API's own) turns it into a bare 500.
 * A body left unread (a 413, a 401 to an upload) is drained once the answer is out, as on the
 * other path; a request read to its end (every GET) costs no listener for that.
 */
function send(
  request: IncomingMessage,
  response: ServerResponse,
  { status, headers, body, contentLength }: ApiAnswer,
): void {
  if (!request.complete && mayHaveBody(request)) {
    const { socket } = request
    response.once('finish', () => {
      if (!request.complete) lingerThenClose(request, socket)
    })
  }
  // A flat [name, value, …] list: Node walks an object with for…in, `hasOwnProperty` and a
  // megamorphic load per header, which cost a small answer ~1% of its instructions (callgrind).
  const fields: string[] = []
  for (const name in headers) fields.push(name, headers[name] as string)
  if (body !== null) fields.push('content-length', contentLength ?? String(Buffer.byteLength(body)))
  try {
    response.writeHead(status, fields)
  } catch {
    if (response.headersSent) return void response.destroy()
    response.writeHead(500, { 'content-type': 'application/json', 'content-length': String(LAST_RESORT.length) })
    body = LAST_RESORT
  }
  // node:http sends no body to HEAD by itself.
  response.end(body ?? undefined)
}

/** The listener that drives an engine directly; requests it cannot read as they are go to `fallback`. */
function engineListener(engine: Engine, fallback: NodeListener): NodeListener {
  return (request, response) => {
    // A body that Express or another middleware has already parsed: the stream is spent, @whatwg-node knows the way.
    if ((request as IncomingMessage & { body?: unknown }).body !== undefined) return fallback(request, response)
    let result: ReturnType<Engine>
    try {
      result = engine(new NodeApiRequest(request, response))
    } catch {
      // An engine never throws; one of another make that does must not take the process down.
      return send(request, response, lastResort())
    }
    if (!pending(result)) return send(request, response, result)
    if (result instanceof AnswerToCome) return result.take((answer) => send(request, response, answer))
    result.then(
      (answer) => send(request, response, answer),
      () => send(request, response, lastResort()),
    )
  }
}

/** How long, and how many bytes, an unread request body is drained after its answer. */
const LINGER_MS = 2_000
const LINGER_BYTES = 8 * 1024 * 1024

/**
 * The answer went out before the request body was read to its end (a 413, or
 * a 401 to an upload). Closing the socket at once would make the kernel
 * reset the connection while the client is still sending, and a reset can
 * destroy the answer before the client reads it. So, like a web server's
 * lingering close, the rest of the body is read and thrown away, and the
 * connection lives on if it ends within a bounded time and size; a client
 * that goes on sending past that is cut off. Memory stays flat either way.
 */
function lingerThenClose(request: IncomingMessage, socket: Socket): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  if (request.destroyed || request.socket !== socket) {
    // The handler's reader destroyed the request when it stopped reading (@whatwg-node/server's stream does):
    // nothing is left to drain through it, and the connection, whose parser still holds the rest of the body,
    // would never serve another request. It is closed after the answer, which has gone out.
    socket.end()
    return
  }
  let drained = 0
  // `read()` rather than `resume()`: the handler's stream reader may still hold
  // a 'readable' listener, and while one is attached the stream never flows.
  request.on('readable', () => {
    for (let chunk: Buffer | null = request.read(); chunk !== null; chunk = request.read()) {
      drained += chunk.byteLength
      if (drained > LINGER_BYTES) {
        clearTimeout(timer)
        socket.destroy()
        return
      }
    }
  })
  request.once('end', () => {
    clearTimeout(timer)
    // If the server began closing while this body drained, its close() has already closed the connections
    // idle at that moment and would wait for this one until the keep-alive timeout (72 s under Fastify).
    const { server } = socket as Socket & { server?: { listening: boolean } }
    if (server && !server.listening) socket.end()
  })
  request.read(0)
}

/** Requests Node turns away before any handler sees them: status, `code` and `message` of the JSON answer. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request was not received in time'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'Request headers are too large'],
}
const MALFORMED: [number, string, string] = [400, 'bad_request', 'Malformed HTTP request']

/**
 * Answers what Node rejects by itself (a slow loris past `headersTimeout`, a
 * body past `requestTimeout`, unparseable HTTP) like the API answers its
 * errors: a JSON body with `nosniff` and `no-store`, where Node would send a
 * bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, onResponse?: OnResponse): void {
  // Node's own check: once an answer has begun on this connection, a second one would corrupt it.
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent
  if (error.code === 'ECONNRESET' || !socket.writable || answering) return void socket.destroy()
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED
  // The request line and headers were not read: no method, target or client id to tell.
  const id = ownRequestId(undefined)
  const body = endWithError(socket, status, code, message, { 'X-Request-Id': id })
  tellOwn(onResponse, { method: '', url: '' }, { status, code, body }, id)
}

/**
 * A CONNECT (Node would close the socket without a word): this is an origin
 * server, not a proxy, so no target is tunnelled to. 405 with the methods the
 * API takes at all, as for any method it does not.
 */
function answerConnect(request: IncomingMessage, socket: Socket, onResponse?: OnResponse): void {
  if (!socket.writable) return void socket.destroy()
  const started = performance.now()
  const id = ownRequestId(request.headers['x-request-id'])
  const code = 'method_not_allowed'
  const body = endWithError(socket, 405, code, 'CONNECT is not supported: this server is no proxy', {
    Allow: 'GET, HEAD, POST',
    'X-Request-Id': id,
  })
  tellOwn(onResponse, { method: 'CONNECT', url: request.url ?? '' }, { status: 405, code, body }, id, started)
}

/**
 * Writes a JSON Error straight to a socket that no `ServerResponse` owns, and
 * half-closes it; a client that does not close its side is cut off a second
 * later. Returns the body written.
 */
function endWithError(
  socket: Socket,
  status: number,
  code: string,
  message: string,
  extra: Record<string, string> = {},
): string {
  const body = JSON.stringify({ code, message, status })
  const headers = Object.entries(extra).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n` +
      `${headers.join('')}\r\n${body}`,
  )
  // What the client still sends is read and dropped: unread bytes at close would reset the connection.
  socket.resume()
  setTimeout(() => socket.destroy(), 1_000).unref()
  return body
}

/**
 * A JSON Error for a request Node would answer by itself (no `Host`, an
 * `Expect` it does not know), in the API's shape, and the connection closed after it.
 */
function refuse(
  request: IncomingMessage,
  response: ServerResponse,
  error: PetstoreError,
  onResponse: OnResponse | undefined,
  started: number,
): void {
  const answer = errorAnswer(error)
  setDefaults(answer.headers)
  answer.headers.connection = 'close'
  const id = ownRequestId(request.headers['x-request-id'])
  answer.headers['x-request-id'] = id
  send(request, response, answer)
  const { method = '', url = '' } = request
  // node:http sends no body to HEAD: none is counted.
  const told = { status: answer.status, code: error.code, body: method === 'HEAD' ? null : answer.body }
  tellOwn(onResponse, { method, url }, told, id, started)
}

/**
 * Why the request's `Host` is one RFC 9112 (section 3.2) answers with a 400: none on HTTP/1.1 (Node
 * would answer that with an empty body), or more than one field (Node keeps the first, where a proxy
 * in front may have read the last).
 */
function hostProblem(request: IncomingMessage): string | undefined {
  if (request.headers.host === undefined) {
    const http11 = request.httpVersionMajor === 1 && request.httpVersionMinor === 1
    return http11 ? 'An HTTP/1.1 request needs a Host header' : undefined
  }
  const raw = request.rawHeaders
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (isNamed(raw[i] as string, 'host', 'Host') && ++seen > 1) return 'A request carries one Host header'
  }
  return undefined
}

/** Options of {@link serve}. Every limit has a default meant for a server exposed as it is. */
export interface ServeOptions {
  handler: FetchHandler
  /** `0` picks a free port. @default 8080 */
  port?: number | undefined
  /** @default '127.0.0.1' */
  hostname?: string | undefined
  /**
   * Time a client has to send a request's line and headers. A client that sends
   * them byte by byte (a "slow loris"), or connects and sends nothing, gets a 408
   * and is disconnected. `0` turns the check off.
   * @default 10_000
   */
  headersTimeoutMs?: number | undefined
  /**
   * Time a client has to send a whole request, body included: an upload that
   * never ends gets a 408 and is disconnected. At least `headersTimeoutMs`
   * (Node's rule), or `0` for off. The largest body the API takes is 100 KiB, so
   * 30 s only cuts clients slower than ~3 KiB/s.
   * @default 30_000
   */
  requestTimeoutMs?: number | undefined
  /**
   * How long an idle keep-alive connection is kept open. One that goes quiet for that long in the
   * middle of its next request head is closed too, without an answer (Node's rule);
   * `headersTimeoutMs` bounds a head that keeps coming.
   * @default 5_000 (Node's own)
   */
  keepAliveTimeoutMs?: number | undefined
  /**
   * Connections open at once. At the cap, a new connection makes room by
   * closing the connection idle the longest (one that has sent no request yet,
   * or a keep-alive one between requests), so a flood of idle connections
   * cannot keep anyone out; only when every connection has a request in flight
   * is the newcomer closed (reset: there is no room to answer 503). A flood
   * then costs the server at most this many file descriptors and parser states
   * (under 10 MiB for 1024, measured) instead of exhausting descriptors, which
   * would fail accept() for everyone, database files included. `0` or
   * `Infinity` for no cap.
   * @default 1024
   */
  maxConnections?: number | undefined
  /**
   * Connections open at once from one client address; past it, that address's
   * own connection idle the longest is closed (and the newcomer if none is
   * idle). Off by default: behind a proxy every client has the proxy's address.
   * `0` for no cap.
   * @default 0
   */
  maxConnectionsPerAddress?: number | undefined
  /**
   * Time a new connection has to send its first request head. A connection
   * that has sent nothing by then is closed (as an idle keep-alive one is); one
   * that has sent part of a head gets a 408. Later requests on the connection
   * have `headersTimeoutMs`. `0` turns the check off.
   * @default 5_000
   */
  firstRequestTimeoutMs?: number | undefined
  /**
   * How long {@link RunningServer.close} waits for requests in flight before it
   * cuts the connections still open. Under Kubernetes' default 30 s grace
   * period with room to spare; the API's own requests take milliseconds.
   * @default 10_000
   */
  shutdownTimeoutMs?: number | undefined
  /**
   * Told of the answers written here rather than by the handler (a 408 to a
   * slow client, a 431, a 400 for malformed HTTP or a missing or repeated `Host`, a 405 to
   * CONNECT, a 417), which carry an `X-Request-Id` too. Give it the hook the
   * handler's `onResponse` has, so that logs and metrics see every answer.
   * Their `method` and `url` are `''` where Node could not read the request,
   * `route` is `null`.
   */
  onResponse?: OnResponse | undefined
}

/** A running server. */
export interface RunningServer {
  /** The underlying `node:http` server. */
  server: Server
  /** The port actually bound (useful with `port: 0`). */
  port: number
  hostname: string
  /**
   * Stops accepting connections, closes idle keep-alive connections and those
   * that have not sent a whole request head yet, lets requests in flight
   * finish (their answers say `Connection: close`), and resolves once every
   * connection is gone, at the latest `shutdownTimeoutMs` after the call: then
   * the connections still open are cut, and a line on stderr says how many.
   * Calling it again returns the same promise.
   */
  close(): Promise<void>
}

const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  maxConnectionsPerAddress: 0,
  firstRequestTimeoutMs: 5_000,
  shutdownTimeoutMs: 10_000,
}

/**
 * Node enforces `headersTimeout` and `requestTimeout` only when it sweeps its
 * connections, every 30 s by default: a 10 s limit would then hold for up to
 * 40 s. A tenth of the shortest limit (within 50 ms .. 1 s) keeps them within
 * 10 % for the cost of a walk over the open connections.
 */
function checkingInterval(...timeouts: number[]): number {
  const shortest = Math.min(...timeouts.filter((timeout) => timeout > 0), 10_000)
  return Math.min(1_000, Math.max(50, Math.floor(shortest / 10)))
}

/**
 * Serves a fetch handler on `node:http` and resolves once it listens, with
 * timeouts against slow clients, a connection cap and a bounded graceful close
 * (see {@link ServeOptions} for the defaults).
 *
 * Per-socket idle timeouts are not used: `@whatwg-node/server` resets them
 * (`socket.setTimeout(0)`) on every answer, so the limits are the server's,
 * and idle connections are tracked by the server too (connection-guard.ts).
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/node'
 *
 * const server = await serve({ handler, port: 8080 })
 * process.on('SIGTERM', () => server.close().then(() => process.exit(0)))
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  checkServeOptions('petstore-server/node serve', options, [
    'handler',
    'port',
    'hostname',
    'onResponse',
    ...Object.keys(DEFAULTS),
  ])
  const { handler, port = 8080, hostname = '127.0.0.1', onResponse } = options
  const limits = { ...DEFAULTS, ...definedOnly(options) }
  checkLimits(limits)
  optionalFunction('petstore-server/node serve', 'onResponse', onResponse)
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, shutdownTimeoutMs } = limits
  const listener = toNodeListener(handler)
  let closing: Promise<void> | undefined
  /**
   * The server's answers tell the connection guard when they are out through their class: Node
   * calls `detachSocket` once an answer is written and its connection free for the next request.
   * A 'close' listener on every answer (and a property keeping its connection, which `socket`
   * no longer holds by then) cost ~500 instructions of each request (callgrind); a closure per
   * request before that, a tenth of a 401. An answer cut off with its connection needs no word:
   * the guard forgets a connection at its own 'close'.
   */
  class GuardedResponse extends ServerResponse {
    override detachSocket(socket: Socket): void {
      super.detachSocket(socket)
      connections.answered(this, socket)
      // Its connection may be idle now: when closing, it must not stay open until keepAliveTimeout.
      if (closing) setImmediate(closeIdle)
    }
  }

  /**
   * Closes the connections with no request in flight. Node's own idle ones, and the guard's, which
   * also holds those that have sent no request yet (open until the first-request timeout) or only
   * part of their next one (which Node leaves open until keepAliveTimeout).
   */
  const closeIdle = () => {
    server.closeIdleConnections()
    connections.closeIdle()
  }

  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingInterval(headersTimeoutMs, requestTimeoutMs),
      // Node's own 400 has an empty body: the request handler answers it instead.
      requireHostHeader: false,
      ServerResponse: GuardedResponse,
    },
    (request, response) => {
      connections.busy(request.socket, response)
      if (closing) response.shouldKeepAlive = false
      const wrongHost = hostProblem(request)
      if (wrongHost !== undefined) {
        return refuse(
          request,
          response,
          new PetstoreError(400, 'bad_request', wrongHost),
          onResponse,
          performance.now(),
        )
      }
      listener(request, response)
    },
  )
  // Not `server.maxConnections`: past it Node refuses newcomers, and idle connections would keep everyone out.
  const connections = guardConnections(server, {
    ...limits,
    maxConnections: Number.isFinite(limits.maxConnections) ? limits.maxConnections : 0,
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, onResponse),
  )
  server.on('connect', (request: IncomingMessage, socket: Socket) => answerConnect(request, socket, onResponse))
  server.on('checkExpectation', (request, response) =>
    refuse(
      request,
      response,
      new PetstoreError(417, 'expectation_failed', 'Expect: 100-continue is the only expectation this server meets'),
      onResponse,
      performance.now(),
    ),
  )
  // The 100 is sent when the API starts reading the body, so a request refused before (a 401) gets no 100.
  server.on('checkContinue', (request, response) => {
    awaitingContinue.add(response)
    server.emit('request', request, response)
  })

  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => {
      connections.stop()
      reject(error)
    }
    server.once('error', failed)
    server.listen(port, hostname, () => {
      server.off('error', failed)
      resolve()
    })
  })
  // Once listening, the only server errors are failed accepts (EMFILE and the like): Node has
  // dropped that connection already, and an 'error' without a listener would end the process.
  server.on('error', (error) => process.stderr.write(`petstore-server/node: ${error.message}\n`))

  return {
    server,
    port: (server.address() as AddressInfo).port,
    hostname,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        // Answers not started yet say `Connection: close`, so clients do not send more on them.
        for (const response of connections.inFlight()) if (!response.headersSent) response.shouldKeepAlive = false
        const deadline = setTimeout(() => {
          const cut = connections.openCount()
          // Said, since the clients on them (a stalled upload, a slow download) get no answer.
          if (cut > 0)
            process.stderr.write(
              `petstore-server/node: ${cut} connection(s) still open ${shutdownTimeoutMs} ms after close(), cut\n`,
            )
          server.closeAllConnections()
        }, shutdownTimeoutMs)
        server.close((error) => {
          clearTimeout(deadline)
          if (error) reject(error)
          else resolve()
        })
        // Connections with no request in flight would hold close() open.
        closeIdle()
      })
      return closing
    },
  }
}

/** The limits a timer or a count can hold, named as `serve()` names them (Node's own errors name its options). */
function checkLimits(limits: typeof DEFAULTS): void {
  const owner = 'petstore-server/node serve'
  for (const name of ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'firstRequestTimeoutMs'] as const) {
    wholeNumber(owner, name, limits[name], { max: MAX_TIMER_MS })
  }
  for (const name of ['maxConnections', 'maxConnectionsPerAddress'] as const) {
    wholeNumber(owner, name, limits[name], { infinity: 'no cap, as 0' })
  }
  const { headersTimeoutMs, requestTimeoutMs } = limits
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new TypeError(
      `${owner}: requestTimeoutMs (${requestTimeoutMs}) must be at least headersTimeoutMs (${headersTimeoutMs}), or 0`,
    )
  }
}

/** The options that are set: `{ maxConnections: undefined }` means the default, not no cap. */
function definedOnly(options: ServeOptions): Partial<typeof DEFAULTS> {
  return Object.fromEntries(
    Object.entries(options).filter(([name, value]) => name in DEFAULTS && value !== undefined),
  ) as Partial<typeof DEFAULTS>
}
