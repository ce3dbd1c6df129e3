/**
 * `createPetstore`: the Petstore API as a web-standard fetch handler.
 *
 * @module
 */
import { type IRequest, Router } from 'itty-router'
import { createAuthenticator, type KeyCheck } from './auth.js'
import { type CorsOptions, createCors } from './cors.js'
import { errorResponse, isServerError, PetstoreError } from './errors.js'
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
   * An empty list throws: the handler never serves unauthenticated.
   */
  keys: readonly string[] | KeyCheck
  /** Path prefix of the API. Embedded under `/api`, use `'/api/v1'`. @default '/v1' */
  basePath?: string
  /** Largest accepted request body, in bytes. @default 102400 (100 KiB) */
  maxBodyBytes?: number
  /** Allow browsers on other origins. @default undefined (no CORS headers) */
  cors?: CorsOptions
  /**
   * Told of every 5xx with its cause (never a key or an `Authorization` value).
   * @default logs one line to stderr with `console.error`
   */
  onError?: (error: unknown, request: Request) => void
}

/** A web-standard fetch handler: what Node (via an adapter), Bun and Deno serve. */
export type FetchHandler = (request: Request) => Promise<Response>

const defaultOnError = (error: unknown, request: Request) => {
  console.error(`petstore: ${request.method} ${new URL(request.url).pathname} failed:`, error)
}

/** `'/v1/'` → `'/v1'`, `'/'` → `''`; anything not starting with `/` is refused. */
function normalizeBasePath(basePath: string): string {
  if (!basePath.startsWith('/') && basePath !== '') {
    throw new TypeError(`createPetstore: basePath must start with "/", got ${JSON.stringify(basePath)}`)
  }
  return basePath.replace(/\/+$/, '')
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
  const onError = options.onError ?? defaultOnError
  const authenticate = createAuthenticator(options.keys)
  const cors = options.cors ? createCors(options.cors) : undefined
  const context: OperationContext = { store: options.store, basePath, maxBodyBytes }
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
    if (pathname.replace(/\/+$/, '') === documentPath) return undefined
    await authenticate(request)
  }

  function finish(response: Response, request: IRequest): Response {
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
  const list = (request: IRequest) => listPets(new URL(request.url), context)
  const get = (request: IRequest) => getPet(request.params.petId ?? '', context)

  const router = Router({
    base: basePath,
    before: [gate],
    catch: (error: unknown, request: IRequest) => {
      if (isServerError(error)) onError(error, request)
      return errorResponse(error)
    },
    finally: [finish],
  })
    .get('/openapi.json', openapi)
    .head('/openapi.json', openapi)
    .all('/openapi.json', notAllowed('GET, HEAD'))
    .get('/pets', list)
    .head('/pets', list)
    .post('/pets', (request: IRequest) => createPet(request, context))
    .all('/pets', notAllowed('GET, HEAD, POST'))
    .get('/pets/:petId', get)
    .head('/pets/:petId', get)
    .all('/pets/:petId', notAllowed('GET, HEAD'))
    .all('*', () => {
      throw new PetstoreError(404, 'not_found', 'No such route')
    })

  return async (request) => {
    try {
      return await router.fetch(request)
    } catch (error) {
      // Only a failing onError or finish can land here; still answer.
      return errorResponse(error)
    }
  }
}
