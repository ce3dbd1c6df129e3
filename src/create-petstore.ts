/**
 * `createPetstore`: the Petstore API as a web-standard fetch handler.
 *
 * @module
 */
import { type IRequest, Router } from 'itty-router'
import { createAuthenticator, type KeyCheck } from './auth.js'
import { type CorsOptions, createCors } from './cors.js'
import { type Limits, timeoutOption, waitFor } from './deadline.js'
import { errorResponse, PetstoreError } from './errors.js'
import { guardStore } from './guarded-store.js'
import { setDefaults, setDeprecation } from './headers.js'
import { openApiDocument } from './openapi.js'
import { createPet, getPet, listPets, type OperationContext } from './operations.js'
import type { PetStore } from './store.js'

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
  basePath?: string
  /** Largest accepted request body, in bytes. @default 102400 (100 KiB) */
  maxBodyBytes?: number
  /** Allow browsers on other origins. @default undefined (no CORS headers) */
  cors?: CorsOptions
  /**
   * How long a store call (or a `keys` function) may take, in milliseconds,
   * before the request is answered 503 `unavailable` and its late result
   * dropped. `0` or `Infinity` waits without limit.
   * @default 30000
   */
  requestTimeout?: number
  /**
   * Told of every 5xx with its cause. The request it gets is a copy without
   * body and without `Authorization`, so a logger cannot write a key out.
   * Its own failures are ignored.
   * @default logs one line to stderr with `console.error`
   */
  onError?: (error: unknown, request: Request) => void
}

/** A web-standard fetch handler: what Node (via an adapter), Bun and Deno serve. */
export type FetchHandler = (request: Request) => Promise<Response>

const defaultOnError = (error: unknown, request: Request) => {
  console.error(`petstore: ${request.method} ${new URL(request.url).pathname} failed:`, error)
}

/**
 * `'/v1///'` → `'/v1'`. A loop, not `/\/+$/`: on a path of many slashes
 * followed by something else, that regex backtracks quadratically.
 */
function trimSlashes(path: string): string {
  let end = path.length
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--
  return path.slice(0, end)
}

/** `'/v1/'` → `'/v1'`, `'/'` → `''`; anything not starting with `/` is refused. */
function normalizeBasePath(basePath: string): string {
  if (!basePath.startsWith('/') && basePath !== '') {
    throw new TypeError(`createPetstore: basePath must start with "/", got ${JSON.stringify(basePath)}`)
  }
  return trimSlashes(basePath)
}

/** What `onError` sees of a request: no body, and no `Authorization` to log by mistake. */
function redact(request: Request): Request {
  try {
    const headers = new Headers(request.headers)
    headers.delete('authorization')
    return new Request(request.url, { method: request.method, headers })
  } catch {
    // A request object of another implementation: its URL is still worth telling.
    return new Request(request.url)
  }
}

/** Tells `onError`, whose own failures (thrown or rejected) must not change the answer. */
function reporter(onError: NonNullable<PetstoreOptions['onError']>) {
  return (error: unknown, request: Request) => {
    try {
      const result: unknown = onError(error, redact(request))
      // An async onError that rejects would otherwise be an unhandled rejection.
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(result).catch(() => {})
      }
    } catch {}
  }
}

const notAllowed = (allow: string) => () => {
  throw new PetstoreError(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { headers: { allow } })
}

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
  if (!options?.store) throw new TypeError('createPetstore: `store` is required (for example memoryStore())')
  const basePath = normalizeBasePath(options.basePath ?? '/v1')
  const maxBodyBytes = options.maxBodyBytes ?? 100 * 1024
  const report = reporter(options.onError ?? defaultOnError)
  const timeoutMs = timeoutOption(options.requestTimeout, 30_000)
  const authenticate = createAuthenticator(options.keys)
  const keyFunction = typeof options.keys === 'function'
  const cors = options.cors ? createCors(options.cors) : undefined
  const limits = (request: Request): Limits => ({ timeoutMs, signal: request.signal })
  /** Each request talks to the store through its own limits: its timeout, its client's abort. */
  const contextOf = (request: Request): OperationContext => ({
    store: guardStore(options.store, limits(request)),
    basePath,
    maxBodyBytes,
  })
  const documentText = JSON.stringify(openApiDocument(basePath))
  const documentPath = `${basePath}/openapi.json`
  const getPetPath = new RegExp(`^${basePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/pets/[^/]+/*$`)

  // Runs before any route: the order of checks is base path, CORS preflight, authentication.
  async function gate(request: IRequest) {
    const { pathname } = new URL(request.url)
    if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) {
      throw new PetstoreError(404, 'not_found', 'No such route')
    }
    if (cors && request.method === 'OPTIONS') return cors.preflight()
    if (trimSlashes(pathname) === documentPath) return undefined
    // A `keys` function may call out (a key service): it waits under the same limits as the store.
    await (keyFunction ? waitFor(() => authenticate(request), limits(request)) : authenticate(request))
  }

  function finish(response: Response, request: Request): Response {
    const { headers } = response
    setDefaults(headers)
    if ((request.method === 'GET' || request.method === 'HEAD') && getPetPath.test(new URL(request.url).pathname)) {
      setDeprecation(headers, basePath)
    }
    cors?.decorate(headers, request)
    // HEAD is answered like GET, without the body.
    return request.method === 'HEAD' ? new Response(null, { status: response.status, headers }) : response
  }

  const openapi = () => new Response(documentText, { headers: { 'content-type': 'application/json' } })
  const list = (request: IRequest) => listPets(new URL(request.url), contextOf(request))
  const get = (request: IRequest) => getPet(request.params.petId ?? '', contextOf(request))

  const router = Router({
    base: basePath,
    before: [gate],
    catch: (error: unknown, request: IRequest) => {
      // Judged by the answer: even a 4xx PetstoreError that cannot be sent as it is becomes a 500.
      const response = errorResponse(error)
      if (response.status >= 500) report(error, request)
      return response
    },
  })
    .get('/openapi.json', openapi)
    .head('/openapi.json', openapi)
    .all('/openapi.json', notAllowed('GET, HEAD'))
    .get('/pets', list)
    .head('/pets', list)
    .post('/pets', (request: IRequest) => createPet(request, contextOf(request)))
    .all('/pets', notAllowed('GET, HEAD, POST'))
    .get('/pets/:petId', get)
    .head('/pets/:petId', get)
    .all('/pets/:petId', notAllowed('GET, HEAD'))
    .all('*', () => {
      throw new PetstoreError(404, 'not_found', 'No such route')
    })

  return async (request) => {
    let response: Response
    try {
      response = await router.fetch(request)
    } catch (error) {
      // The router answers every error itself; this is only a last resort.
      report(error, request)
      response = errorResponse(error)
    }
    try {
      return finish(response, request)
    } catch (error) {
      // A `cors.origin` function can throw: still answer, with the headers every answer carries.
      report(error, request)
      const fallback = errorResponse(error)
      setDefaults(fallback.headers)
      return request.method === 'HEAD'
        ? new Response(null, { status: fallback.status, headers: fallback.headers })
        : fallback
    }
  }
}
