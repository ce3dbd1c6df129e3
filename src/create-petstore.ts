/**
 * `createPetstore`: the Petstore API as a web-standard fetch handler.
 *
 * @module
 */
import { createAuthenticator } from './api/auth.js'
import { cursorCodec } from './api/cursor.js'
import { DEFAULT_TTL_MS } from './api/idempotency.js'
import { openApiDocument } from './api/openapi.js'
import type { OperationContext } from './api/operations.js'
import { apiRoutes } from './api/routes.js'
import { normalizeBasePath } from './http/base-path.js'
import { type CorsOptions, createCors } from './http/cors.js'
import { type ApiEngine, createApiEngine } from './http/engine.js'
import { type FetchHandler, toFetchHandler } from './http/fetch-handler.js'
import { createFinish, reporter } from './http/finish.js'
import { RouteTable } from './http/route-table.js'
import {
  checkStore,
  MAX_IDEMPOTENCY_TTL_MS,
  normalizeServers,
  OPTION_NAMES,
  type PetstoreOptions,
} from './petstore-options.js'
import { timeoutOption, waitFor } from './shared/deadline.js'
import { storeOf } from './store/checked-store.js'
import { guardStore } from './store/guarded-store.js'
import { knownOptions, optionalFunction, optionsObject, wholeNumber } from './util/option-checks.js'

export type { FetchHandler } from './http/fetch-handler.js'
export { type PetstoreOptions, serverUrlProblem } from './petstore-options.js'

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
 * {@link createPetstore} wraps as a fetch handler, what the Node adapter
 * drives without building a `Request` or a `Response`, and what the binary
 * and `withDocs` add routes to.
 */
function createEngine(options: PetstoreOptions): ApiEngine {
  optionsObject('createPetstore', 'options', options, '{ store, keys }')
  knownOptions('createPetstore', options, OPTION_NAMES)
  const store = checkStore(options.store)
  const basePath = normalizeBasePath('createPetstore', options.basePath ?? '/v1')
  const maxBodyBytes = wholeNumber('createPetstore', 'maxBodyBytes', options.maxBodyBytes ?? 100 * 1024, { min: 1 })
  const onResponse = optionalFunction('createPetstore', 'onResponse', options.onResponse)
  const report = reporter(optionalFunction('createPetstore', 'onError', options.onError))
  const timeoutMs = timeoutOption(options.requestTimeout, 30_000)
  const ttlMs = wholeNumber('createPetstore', 'idempotencyTtl', options.idempotencyTtl ?? DEFAULT_TTL_MS, {
    min: 1,
    max: MAX_IDEMPOTENCY_TTL_MS,
  })
  const check = createAuthenticator(options.keys)
  // A `keys` function may call out (a key service): it waits under the same limits as the store.
  const authenticate =
    typeof options.keys === 'function'
      ? (request: Parameters<typeof check>[0]) => waitFor(() => check(request), { timeoutMs, signal: request.signal })
      : check
  // Off when absent (`false` and `null` too: `cors: enabled && { … }`); anything else is checked.
  const given = options.cors as CorsOptions | false | null | undefined
  const cors = given === undefined || given === null || given === false ? undefined : createCors(given)
  /** One for every request: each store call is bounded by its request's signal and the timeout. */
  const context: OperationContext = {
    store: guardStore(storeOf(store), timeoutMs),
    basePath,
    maxBodyBytes,
    cursors: cursorCodec(options.cursorSecret),
    // A retry waits for its key's first create at most half the request's time (10 s at most): then 409.
    idempotency: { ttlMs, waitMs: Math.min(10_000, timeoutMs / 2) },
  }
  const documentText = JSON.stringify(openApiDocument(basePath, normalizeServers(options.servers)))
  return createApiEngine({
    table: new RouteTable(apiRoutes(context, documentText)),
    basePath,
    cors,
    authenticate,
    finish: createFinish(cors, report, onResponse),
  })
}
