/**
 * `createPetstore`: the Petstore API as a web-standard fetch handler.
 *
 * @module
 */
import { type IRequest, Router } from 'itty-router'
import { createAuthenticator, type KeyCheck, type Verdict } from './api/auth.js'
import { cursorCodec } from './api/cursor.js'
import { errorAnswer, fixedAnswer, oneLineOf, PetstoreError } from './api/errors.js'
import { openApiDocument, type ServerEntry } from './api/openapi.js'
import { createPet, getPet, listPets, type OperationContext } from './api/operations.js'
import { normalizeBasePath, trimSlashes } from './http/base-path.js'
import { type CorsOptions, createCors } from './http/cors.js'
import { type Limits, timeoutOption, waitFor } from './http/deadline.js'
import { Deferred } from './http/deferred.js'
import {
  AnswerToCome,
  type ApiAnswer,
  type ApiRequest,
  BASE_PATH,
  type Engine,
  headAnswer,
  jsonAnswer,
  ON_RESPONSE,
  pending,
  toFetchHandler,
} from './http/exchange.js'
import { deprecationHeaders, setDefaults } from './http/headers.js'
import { type OnResponse, tell } from './http/observe.js'
import { requestId as idOf } from './http/request-id.js'
import { ambiguousPath } from './http/request-path.js'
import { parseOriginTarget, parseTarget, type Target } from './http/request-target.js'
import { loadTracing, traced, tracing } from './http/tracing.js'
import { storeOf } from './store/checked-store.js'
import { guardStore } from './store/guarded-store.js'
import type { PetStore } from './store/store.js'
import { knownOptions, optionalFunction, optionsObject, redactedUrl, shown, wholeNumber } from './util/option-checks.js'

/** Options of {@link createPetstore}. */
export interface PetstoreOptions {
  /** Where pets live: `memoryStore()`, `sqliteStore(…)`, `kyselyStore(…)` or your own. */
  store: PetStore
  /**
   * Valid bearer API keys, or a function deciding whether a token is one.
   * A key can be given by its SHA-256 digest, `sha256:<64 hex digits>`, so
   * that configuration holds no key in clear. An empty list, an empty key or
   * a malformed `sha256:` entry throws: the handler never serves unauthenticated.
   *
   * @example
   * ```ts
   * // The digest of 'secret': echo "sha256:$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)"
   * keys: ['sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b']
   * ```
   */
  keys: readonly string[] | KeyCheck
  /** Path prefix of the API. Embedded under `/api`, use `'/api/v1'`. @default '/v1' */
  basePath?: string | undefined
  /** Largest accepted request body, in bytes. @default 102400 (100 KiB) */
  maxBodyBytes?: number | undefined
  /**
   * The `servers` of the OpenAPI document: the public addresses of the API,
   * base path included. A trailing `/` is dropped.
   * @default [{ url: basePath }], relative to wherever the document is served
   *
   * @example
   * ```ts
   * servers: [
   *   { url: 'https://api.example.org/v1', description: 'Production' },
   *   { url: 'https://staging.example.org/v1', description: 'Staging' },
   * ]
   * ```
   */
  servers?: readonly ServerEntry[] | undefined
  /** Allow browsers on other origins. @default undefined (no CORS headers) */
  cors?: CorsOptions | undefined
  /**
   * How long a store call (or a `keys` function) may take, in milliseconds,
   * before the request is answered 503 `unavailable` and its late result
   * dropped. `0` or `Infinity` waits without limit.
   * @default 30000
   */
  requestTimeout?: number | undefined
  /**
   * Told of every 5xx with its cause. The request it gets is a copy without
   * body and without `Authorization`, so a logger cannot write a key out;
   * its `x-request-id` header is the id the answer carries.
   * Its own failures are ignored.
   * @default logs one line to stderr with `console.error`
   */
  onError?: ((error: unknown, request: Request) => void) | undefined
  /**
   * The secret that signs the `cursor` of `Link: rel="next"` (HMAC-SHA-256),
   * so that a cursor this deployment did not issue, or issued for another
   * `status`, is a 400. Every process serving one database behind one
   * address must share it; without it, each handler draws a random secret
   * and accepts only its own cursors (they then end with the process).
   * @default 32 random bytes per handler
   * @example
   * ```ts
   * cursorSecret: mySecrets.cursorSecret // one long random string for the whole deployment
   * ```
   */
  cursorSecret?: string | undefined
  /**
   * Told of every answered request once its answer is ready: method, target,
   * route template, status, error code, duration, body bytes and request id
   * (never a header, a key or a body). For access logs, metrics and traces.
   * Its own failures are ignored. Unset, it costs nothing.
   *
   * @example
   * ```ts
   * onResponse: (r) => console.log(r.requestId, r.method, r.route, r.status, r.durationMs.toFixed(1))
   * ```
   */
  onResponse?: OnResponse | undefined
}

/** A web-standard fetch handler: what Node (via an adapter), Bun and Deno serve. */
export type FetchHandler = (request: Request) => Promise<Response>

const defaultOnError = (error: unknown, request: Request) => {
  console.error(`petstore: ${request.method} ${new URL(request.url).pathname} failed: ${oneLineOf(error)}`)
}

/**
 * A server's `url`: an absolute http(s) URL or a path, without query or fragment, the way
 * the binary's `--public-url` takes it. `'/'` stays `'/'`.
 */
export function serverUrlProblem(url: string): string | undefined {
  if (url.startsWith('/')) return url.includes('?') || url.includes('#') ? 'a path without ? or #' : undefined
  if (!URL.canParse(url)) return 'an http(s) URL or a path starting with /'
  const { protocol, search, hash, username, password } = new URL(url)
  if (protocol !== 'http:' && protocol !== 'https:') return 'an http(s) URL or a path starting with /'
  // The document is served without a key: a user or password in it would be published.
  if (username || password) return 'a URL without a user or password'
  return search || hash ? 'a URL without ? or #' : undefined
}

/** The options {@link createPetstore} knows: any other name is a mistake (`basepath`, `key`). */
const OPTION_NAMES = [
  'store',
  'keys',
  'basePath',
  'maxBodyBytes',
  'servers',
  'cors',
  'requestTimeout',
  'onError',
  'cursorSecret',
  'onResponse',
] as const

/** The store, if it is one: its absence or a wrong value would be a 500 on every request. */
function checkStore(store: unknown): PetStore {
  if (store === undefined || store === null) {
    throw new TypeError('createPetstore: `store` is required (for example memoryStore())')
  }
  const methods = store as Partial<Record<'create' | 'get' | 'list', unknown>>
  if (typeof methods.create === 'function' && typeof methods.get === 'function' && typeof methods.list === 'function') {
    return store as PetStore
  }
  const hint = typeof store === 'function' ? ' (a store factory? call it: memoryStore())' : ''
  throw new TypeError(
    `createPetstore: store must be a PetStore, with create, get and list methods; got ${shown(store)}${hint}`,
  )
}

/** Checks the `servers` option and drops trailing slashes (`https://x/v1/` → `https://x/v1`). */
function normalizeServers(servers: readonly ServerEntry[] | undefined): ServerEntry[] | undefined {
  if (servers === undefined) return undefined
  if (!Array.isArray(servers)) throw new TypeError('createPetstore: servers must be an array of { url, description? }')
  return servers.map((server: ServerEntry) => {
    const { url, description } = server ?? {}
    if (typeof url !== 'string' || url === '') {
      throw new TypeError(`createPetstore: each of servers needs a url, got ${JSON.stringify(server)}`)
    }
    const problem = serverUrlProblem(url)
    // Shown without its user part, which may hold a password.
    const shownUrl = JSON.stringify(redactedUrl(url))
    if (problem) throw new TypeError(`createPetstore: a server url must be ${problem}, got ${shownUrl}`)
    if (description !== undefined && typeof description !== 'string') {
      throw new TypeError(`createPetstore: a server description must be a string, got ${JSON.stringify(description)}`)
    }
    const trimmed = trimSlashes(url) || '/'
    return description ? { url: trimmed, description } : { url: trimmed }
  })
}

/** What `onError` sees of a request: no body, no `Authorization` to log by mistake, the answer's request id. */
function redact(request: ApiRequest, requestId: string): Request {
  try {
    const headers = new Headers(request.toRequest().headers)
    headers.delete('authorization')
    headers.set('x-request-id', requestId)
    return new Request(request.url, { method: request.method, headers })
  } catch {
    // A request object of another implementation: its URL is still worth telling.
    return new Request(request.url, { headers: { 'x-request-id': requestId } })
  }
}

/** Tells `onError`, whose own failures (thrown or rejected) must not change the answer. */
function reporter(onError: NonNullable<PetstoreOptions['onError']>) {
  return (error: unknown, request: ApiRequest, requestId: string) => {
    try {
      const result: unknown = onError(error, redact(request, requestId))
      // An async onError that rejects would otherwise be an unhandled rejection.
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(result).catch(() => {})
      }
    } catch {}
  }
}

const AMBIGUOUS_PATH =
  'The request path is ambiguous: it holds a backslash, a dot segment (. or .., also as %2e) or an encoded / or \\ (%2f, %5c)'

const notAllowed = (allow: string) =>
  fixedAnswer(new PetstoreError(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { headers: { allow } }))

/** What `route` gives, as a plain promise where a deferred answer is waited on by a caller of its own. */
const promised = (result: ApiAnswer | Promise<ApiAnswer> | Deferred<string>) =>
  result instanceof Deferred ? result.promise() : result

/**
 * A request as the router holds it: itty-router's fields, ours, and the URL's path and query read
 * once. `deprecated` is set by `route` once it knows whether a read is of the deprecated route, so
 * that the answer's last step does not work it out again.
 */
type Routed = IRequest & ApiRequest & { parsed: Target; deprecated?: boolean }

/**
 * Creates the Petstore API as a fetch handler. It never throws: every
 * failure is answered with a JSON Error body.
 *
 * @example
 * ```ts
 * import { createPetstore, memoryStore } from 'petstore-server'
 *
 * const handler = createPetstore({ store: memoryStore(), keys: ['secret'] })
 * const res = await handler(
 *   new Request('http://x/v1/pets', { headers: { authorization: 'Bearer secret' } }),
 * )
 * await res.json() // → []
 * ```
 */
export function createPetstore(options: PetstoreOptions): FetchHandler {
  // Typed as a plain fetch handler: the engine it carries (for the Node adapter's direct path) is internal,
  // and a type naming it could not be written into a user's declaration file (`export const handler = …`).
  return toFetchHandler(createEngine(options))
}

/**
 * The API over the package's own request and answer shapes: what
 * {@link createPetstore} wraps as a fetch handler, and what the Node adapter
 * drives without building a `Request` or a `Response`.
 */
export function createEngine(options: PetstoreOptions): Engine {
  optionsObject('createPetstore', 'options', options, '{ store, keys }')
  knownOptions('createPetstore', options, OPTION_NAMES)
  const store = checkStore(options.store)
  const basePath = normalizeBasePath('createPetstore', options.basePath ?? '/v1')
  const maxBodyBytes = wholeNumber('createPetstore', 'maxBodyBytes', options.maxBodyBytes ?? 100 * 1024, { min: 1 })
  optionalFunction('createPetstore', 'onResponse', options.onResponse)
  const report = reporter(optionalFunction('createPetstore', 'onError', options.onError) ?? defaultOnError)
  const timeoutMs = timeoutOption(options.requestTimeout, 30_000)
  const authenticate = createAuthenticator(options.keys)
  const keyFunction = typeof options.keys === 'function'
  // Off when absent (`false` and `null` too: `cors: enabled && { … }`); anything else is checked.
  const given = options.cors as CorsOptions | false | null | undefined
  const cors = given === undefined || given === null || given === false ? undefined : createCors(given)
  const cursors = cursorCodec(options.cursorSecret)
  const limits = (request: ApiRequest): Limits => ({ timeoutMs, signal: request.signal })
  /** One for every request: each store call is bounded by its request's signal and the timeout. */
  const context: OperationContext = { store: guardStore(storeOf(store), timeoutMs), basePath, maxBodyBytes, cursors }
  const documentText = JSON.stringify(openApiDocument(basePath, normalizeServers(options.servers)))
  const documentPath = `${basePath}/openapi.json`
  const petsPath = `${basePath}/pets`
  const petPrefix = `${petsPath}/`
  const basePrefix = `${basePath}/`
  /** Whether `path`, without trailing slashes, is `{basePath}/pets/{petId}` (the deprecated route). */
  const isPetPath = (path: string) => path.startsWith(petPrefix) && !path.includes('/', petPrefix.length)
  const setDeprecation = deprecationHeaders(basePath)

  const noRoute = fixedAnswer(new PetstoreError(404, 'not_found', 'No such route'))

  // Runs before any route: the order of checks is base path, CORS preflight, authentication. An answer
  // (a 404, the preflight's, a 401) is given instead of routing.
  function gate(request: Routed): Verdict | Promise<Verdict> {
    const { pathname } = request.parsed
    if (pathname !== basePath && !pathname.startsWith(basePrefix)) return noRoute()
    if (cors && request.method === 'OPTIONS') return cors.preflight()
    if (trimSlashes(pathname) === documentPath) return undefined
    // A `keys` function may call out (a key service): it waits under the same limits as the store.
    return keyFunction ? waitFor(() => authenticate(request), limits(request)) : authenticate(request)
  }

  function finish(answer: ApiAnswer, request: Routed): ApiAnswer {
    const { headers } = answer
    setDefaults(headers)
    const read = request.method === 'GET' || request.method === 'HEAD'
    if (read && (request.deprecated ?? isPetPath(trimSlashes(request.parsed.pathname)))) setDeprecation(headers)
    cors?.decorate(headers, request)
    // HEAD is answered like GET, without the body.
    return request.method === 'HEAD' ? headAnswer(answer) : answer
  }

  const openapi = () => jsonAnswer(documentText)

  // itty-router answers what is not one of the three operations (see `route`): 405s with `Allow`,
  // 404s, the document.
  const router = Router<Routed>({ base: basePath })
    .get('/openapi.json', openapi)
    .head('/openapi.json', openapi)
    .all('/openapi.json', notAllowed('GET, HEAD'))
    .all('/pets', notAllowed('GET, HEAD, POST'))
    .all('/pets/:petId', notAllowed('GET, HEAD'))
    // `route` answers unknown paths itself: this is only for a path its patterns and `route` would read apart.
    .all('*', noRoute)

  /**
   * The three operations are found without the router: it would parse the URL
   * a second time, collect every query parameter and await a hook per step,
   * which costs a small answer several percent, and its answer is always a
   * promise where a store that answers at once lets ours be written in the same
   * turn. So is a path the API does not have: a scan of probed paths is all
   * 404s, and through the router each cost 1.40 times the yardstick's CPU
   * (measured at once; 1.09 this way). The router serves the rest: the document, and the 405s
   * of the known paths. Trailing slashes are dropped as the router's patterns
   * allow them.
   */
  function route(request: Routed): ApiAnswer | Promise<ApiAnswer> | Deferred<string> {
    const path = trimSlashes(request.parsed.pathname)
    const { method } = request
    const read = method === 'GET' || method === 'HEAD'
    if (path === petsPath) {
      request.deprecated = false
      if (read) return listPets(request.parsed, context, request.signal)
      if (method === 'POST') return createPet(request, context)
    } else if (isPetPath(path)) {
      request.deprecated = true
      if (read) return getPet(path.slice(petPrefix.length), context, request.signal)
    } else if (path !== documentPath) {
      return noRoute()
    }
    return router.fetch(request) as Promise<ApiAnswer>
  }

  function answer(request: Routed): ApiAnswer | Promise<ApiAnswer> | Deferred<string> {
    const verdict = gate(request)
    if (verdict === undefined) return route(request)
    if (verdict instanceof Promise) return verdict.then((refusal) => refusal ?? promised(route(request)))
    return verdict
  }

  /** The one place where what was thrown becomes an answer. */
  function failed(error: unknown, request: ApiRequest, requestId: string): ApiAnswer {
    // Judged by the answer: even a 4xx PetstoreError that cannot be sent as it is becomes a 500, and
    // onError hears of it.
    const result = errorAnswer(error)
    if (result.status >= 500) report(error, request, requestId)
    return result
  }

  /** An answer given without routing: only the headers every answer carries, and HEAD's without its body. */
  function bare(answer: ApiAnswer, request: ApiRequest, requestId: string): ApiAnswer {
    setDefaults(answer.headers)
    answer.headers['x-request-id'] = requestId
    return request.method === 'HEAD' ? headAnswer(answer) : answer
  }

  /** A request refused before its URL is read (an ambiguous or malformed path): CORS headers too, as on every answer. */
  function refused(answer: ApiAnswer, request: ApiRequest, requestId: string): ApiAnswer {
    try {
      cors?.decorate(answer.headers, request)
    } catch (error) {
      report(error, request, requestId)
      return bare(errorAnswer(error), request, requestId)
    }
    return bare(answer, request, requestId)
  }

  function completed(result: ApiAnswer, request: Routed, requestId: string): ApiAnswer {
    try {
      finish(result, request)
    } catch (error) {
      // A `cors.origin` function can throw: still answer, with the headers every answer carries.
      report(error, request, requestId)
      return bare(errorAnswer(error), request, requestId)
    }
    result.headers['x-request-id'] = requestId
    return result
  }

  const ambiguous = fixedAnswer(new PetstoreError(400, 'bad_request', AMBIGUOUS_PATH))
  // Only a request read straight off a socket can carry a URL that does not parse.
  const malformed = fixedAnswer(new PetstoreError(400, 'bad_request', 'The request URL is malformed'))
  const asteriskNotOptions = fixedAnswer(
    new PetstoreError(400, 'bad_request', 'The request target * is only for OPTIONS (OPTIONS * asks about the server)'),
  )

  /**
   * A request whose target is `*` (RFC 9112, section 3.2.4), which only a socket carries: `OPTIONS *` asks what
   * the server supports at all (RFC 9110, section 9.3.7), and is told the methods of its paths, with no key asked
   * for, as a path outside the API would be; any other method with it is malformed.
   */
  function serverWide(request: ApiRequest, requestId: string): ApiAnswer {
    if (request.method !== 'OPTIONS') return refused(asteriskNotOptions(), request, requestId)
    return refused({ status: 204, headers: { allow: 'GET, HEAD, POST, OPTIONS' }, body: null }, request, requestId)
  }

  // Synchronous wherever the answer is known at once (see Engine): no async function, no await.
  const engine: Engine = (request) => {
    const routed = request as Routed
    const requestId = idOf(request.header('x-request-id'))
    const { target } = request
    const plain = target === undefined ? undefined : parseOriginTarget(target)
    // Refused before the URL parser rewrites it: a proxy in front reads the path as sent. The
    // origin-form target holds the same path as the URL (an authority holds no `\`, `%` or `/.`).
    // A plain target holds no `\` and no dot segment, so only a `%` in its path can make it ambiguous.
    if ((plain === undefined || plain.pathname.includes('%')) && ambiguousPath(target ?? request.url)) {
      return refused(ambiguous(), request, requestId)
    }
    try {
      routed.parsed = plain ?? parseTarget(request.url)
    } catch {
      // `*` is a target of its own (RFC 9112, section 3.2.4), not a URL: told apart here, where only what does not parse pays.
      if (request.url === '*') return serverWide(request, requestId)
      return refused(malformed(), request, requestId)
    }
    let result: ApiAnswer | Promise<ApiAnswer> | Deferred<string>
    try {
      result = answer(routed)
    } catch (error) {
      result = failed(error, request, requestId)
    }
    if (result instanceof Deferred) return settle(result, routed, requestId)
    return conclude(result, routed, requestId)
  }

  /** The engine's last step: at once for an answer, after it for a promise of one, whose failure is answered too. */
  function conclude(result: ApiAnswer | Promise<ApiAnswer>, request: Routed, requestId: string) {
    if (!(result instanceof Promise)) return completed(result, request, requestId)
    return result.then(
      (answered) => completed(answered, request, requestId),
      (error) => concludeFailure(error, request, requestId),
    )
  }

  /**
   * A deferred answer with the engine's last step run in the same reaction as the operation's own,
   * and handed on in it too (see AnswerToCome).
   */
  function settle(deferred: Deferred<string>, request: Routed, requestId: string): AnswerToCome {
    const toCome = new AnswerToCome()
    deferred.source.then(
      (value) => {
        let answered: ApiAnswer | Promise<ApiAnswer>
        try {
          answered = deferred.step(value)
        } catch (error) {
          return toCome.give(concludeFailure(error, request, requestId))
        }
        const result = conclude(answered, request, requestId)
        // A store that waits: its answer comes through a promise of conclude's, which never rejects.
        if (result instanceof Promise) result.then((answer) => toCome.give(answer))
        else toCome.give(result)
      },
      (error) => toCome.give(concludeFailure(deferred.refusal(error), request, requestId)),
    )
    return toCome
  }

  /** The answer to what was thrown, with the engine's last step: no closure a create for it. */
  function concludeFailure(error: unknown, request: Routed, requestId: string): ApiAnswer {
    return completed(failed(error, request, requestId), request, requestId)
  }

  const pagePath = `${basePath}/pets/{petId}`
  /** The route template of a request, for `onResponse` and spans: worked out only when someone listens. */
  const routeOf = (request: Routed): string | null => {
    if (request.parsed === undefined) return null
    const path = trimSlashes(request.parsed.pathname)
    if (path === petsPath) return petsPath
    if (path === documentPath) return documentPath
    if (isPetPath(path)) return pagePath
    return null
  }
  const { onResponse } = options
  const observed: Engine = !onResponse
    ? engine
    : (request) => {
        const started = performance.now()
        const told = (answer: ApiAnswer) => {
          tell(onResponse, answer, request, answer.headers['x-request-id'] ?? '', routeOf(request as Routed), started)
          return answer
        }
        const result = engine(request)
        if (result instanceof AnswerToCome) return result.map(told)
        return pending(result) ? result.then(told) : told(result)
      }
  // Spans only once @opentelemetry/api has loaded, if it is installed; until then and without it, one check.
  void loadTracing()
  const served: Engine = (request) => (tracing() ? traced(request as Routed, observed, routeOf) : observed(request))
  return Object.assign(served, { [BASE_PATH]: basePath, [ON_RESPONSE]: onResponse })
}
