/**
 * What the binary builds on besides the package's public entries: routes
 * added to a handler of `createPetstore`, a handler whose keys can change
 * while it serves, and the checks its flags share with the library.
 *
 * @module
 */

import { apiEngineOf } from './http/engine.js'
import { type Engine, engineOf } from './http/exchange.js'
import { type FetchHandler, toFetchHandler } from './http/fetch-handler.js'
import type { Route } from './http/route-table.js'

export { keyProblem } from './api/auth.js'
export { INT64_KEYS } from './api/pet-fields.js'
export { basePathProblem, trimSlashes } from './http/base-path.js'
export { originProblem } from './http/cors.js'
export { errorAnswer } from './http/errors.js'
export { type ApiAnswer, jsonAnswer } from './http/exchange.js'
export { withExactIntegersEach } from './http/json-int64.js'
export type { OnResponse, ResponseInfo } from './http/observe.js'
export { FAULT_KINDS, type FaultKind, MAX_DELAY_MS } from './http/prefer.js'
export type { Route } from './http/route-table.js'
export { MAX_IDEMPOTENCY_TTL_MS, serverUrlProblem } from './petstore-options.js'
export type { PoolStats } from './store/sql/postgres.js'
export { redactedUrl } from './util/option-checks.js'

/** `handler` (of `createPetstore`) serving `routes` too, finished like its own answers. */
export function withRoutes(handler: FetchHandler, routes: readonly Route[]): FetchHandler {
  return toFetchHandler(apiEngineOf('withRoutes', handler).withRoutes(routes))
}

/**
 * A handler that serves what `first` serves until `swap` gives it another
 * (of `createPetstore` too): a request in flight finishes on the one it
 * started on. The Node adapter still drives it directly.
 */
export function swappable(first: FetchHandler): { handler: FetchHandler; swap(next: FetchHandler): void } {
  let current: Engine = ownEngineOf(first)
  return {
    handler: toFetchHandler((request) => current(request)),
    swap(next) {
      current = ownEngineOf(next)
    },
  }
}

/** The engine of a handler this package made; throws for any other. */
function ownEngineOf(handler: FetchHandler): Engine {
  const engine = engineOf(handler)
  if (engine === undefined) throw new TypeError('the handler was not made by this package')
  return engine
}
