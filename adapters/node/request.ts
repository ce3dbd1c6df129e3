/**
 * Node's request as the API reads it: its target, URL and `Host`, its
 * headers, and the view {@link NodeApiRequest} the engine is given.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { ApiRequest } from '../../src/http/exchange.js'
import { authorityParses } from '../../src/http/request-target.js'
import type { AbortLike } from '../../src/shared/deadline.js'
import { readBodyText } from './body.js'

/**
 * Answers to `Expect: 100-continue` whose `100 Continue` is not sent yet
 * (`serve()` adds them): it is, once the API starts reading the body.
 */
export const awaitingContinue = new WeakSet<ServerResponse>()

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
export function isNamed(name: string, lower: string, capitalized: string): boolean {
  return name === capitalized || name === lower || (name.length === lower.length && name.toLowerCase() === lower)
}

/**
 * Every `Authorization` field joined with `, `, as a web `Request` joins them,
 * so that the API sees a repeated one (and refuses it): Node's `headers` keeps
 * only the first, where a proxy in front may have read the last.
 */
export function allAuthorization(raw: readonly string[], first: string): string {
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
 * What `body()` gives where there is a body: a request with `readText` is read through it, never
 * iterated (`ApiRequest.readText`), so nothing reads chunks here; one that tried would be told.
 */
const READ_AS_TEXT: AsyncIterable<Uint8Array> = {
  [Symbol.asyncIterator]() {
    throw new TypeError('petstore-server/node: a request body is read with readText(), not iterated')
  },
}

/**
 * Node's request as the API reads it, without copying it into a `Request`
 * unless one is asked for. It is its own abort signal (the client going away
 * before its answer is written): listeners go on the response only while
 * someone listens, so a request that waits on nothing pays for no
 * `AbortController`, nor for a second object.
 *
 * A class, not an object literal with getters: such a literal kept each
 * request's objects alive until a full garbage collection (bench/README.md).
 * test/request-shape checks that these objects stay fast.
 */
export class NodeApiRequest implements ApiRequest, AbortLike {
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

  /** Built when asked: the API reads `target`, and building the URL to split it again costs every request. */
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
    return this.method === 'GET' || this.method === 'HEAD' ? null : READ_AS_TEXT
  }

  readText(maxBytes: number): Promise<string> {
    // The 100 goes out when reading begins: after the checks of type and declared length, not before.
    if (awaitingContinue.delete(this.response)) this.response.writeContinue()
    return readBodyText(this.request, maxBytes)
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
