/**
 * `withFaults(handler, options)`: a handler of `createPetstore` that fails
 * or waits on purpose, the same way on every run with the same seed.
 *
 * @module
 */
import { apiEngineOf } from '../http/engine.js'
import { type FaultOptions, faultyRoutes } from '../http/faults.js'
import type { FetchHandler } from '../http/fetch-handler.js'
import { toFetchHandler } from '../http/fetch-handler.js'

export type { FaultKind, FaultOptions } from '../http/faults.js'

/**
 * `handler` with faults and latency injected into the API's requests (the
 * document and the reference page are left alone). Each request that passed
 * the key check takes one draw of a generator seeded by `seed`, in the order
 * requests arrive: the same seed and the same order give the same faults.
 * Injected answers are Error bodies with the header `Petstore-Fault: KIND`,
 * and `onResponse` sees their `fault`. `reset` drops the connection under
 * `serve()` of `petstore-server/node`; through a plain fetch call it is a 503.
 *
 * Only a handler of `createPetstore` (or `withDocs` over one) can be
 * wrapped: for any other, `withFaults` throws a `TypeError`. Options that
 * ask for nothing give the handler's routes unchanged.
 *
 * @example
 * ```ts
 * import { createPetstore, memoryStore } from 'petstore-server'
 * import { withFaults } from 'petstore-server/testing'
 *
 * const handler = withFaults(createPetstore({ store: memoryStore(), keys: ['secret'] }), {
 *   faults: { 'after-commit': 0.2, 'rate-limited': 0.1 },
 *   seed: 42,
 * })
 * ```
 */
export function withFaults(handler: FetchHandler, options: FaultOptions): FetchHandler {
  const engine = apiEngineOf('withFaults', handler)
  const map = faultyRoutes(options, engine.basePath)
  return map === undefined ? handler : toFetchHandler(engine.mapRoutes(map))
}
