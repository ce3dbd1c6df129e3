/**
 * Namespaces: many Petstores in one handler, for tests that run at once. `/ns/{name}/…` is a
 * Petstore of its own, made on first use from the seed of the default store, with pets, ids,
 * reset and faults of its own; every other path is the default one.
 *
 * @module
 */
import { createPetstore, type FetchHandler, type PetstoreOptions } from '../create-petstore.js'
import { withRoutes } from '../for-binary.js'
import { normalizeBasePath } from '../http/base-path.js'
import { apiEngineOf } from '../http/engine.js'
import type { Engine } from '../http/exchange.js'
import type { FaultOptions } from '../http/faults.js'
import { toFetchHandler } from '../http/fetch-handler.js'
import { NAMESPACE_ROOT, namespacedEngine } from '../http/namespace-routing.js'
import type { Route } from '../http/route-table.js'
import { PetstoreError } from '../shared/petstore-error.js'
import { namespacesOf, type ResettablePetStore } from '../store/store.js'
import { wholeNumber } from '../util/option-checks.js'
import { namespaceSeed } from '../util/prng.js'
import { withFaults } from './faults.js'
import { Journal, type JournalOptions } from './journal.js'
import { withJournal } from './journal-handler.js'

/** How many namespaces may exist at once when nothing says otherwise. */
export const DEFAULT_MAX_NAMESPACES = 1000

/** The path prefix of namespace `name`: `/ns/{name}`. */
export const namespacePrefix = (name: string): string => `${NAMESPACE_ROOT}/${name}`

/**
 * Makes the handler of one namespace: a handler of `createPetstore` over `store`, its base path
 * and test-control routes under `prefix` (`/ns/{name}`).
 */
export type NamespaceHandlerMaker = (store: ResettablePetStore, prefix: string, name: string) => FetchHandler

const NO_CONTENT = () => ({ status: 204, headers: {}, body: null })

/**
 * `POST {prefix}/__petstore/reset`: the seeded pets back, ids as at start, then `then` (the
 * namespace's journal cleared). Not open: a key is asked.
 */
export const resetRoute = (store: ResettablePetStore, prefix = '', then?: () => unknown): Route => ({
  method: 'POST',
  path: `${prefix}/__petstore/reset`,
  handler: () => store.reset().then(then).then(NO_CONTENT),
})

/**
 * `handler`, the default namespace over `store`, serving the namespaces beside it: each made by
 * `make` on first use, over a store of its own from `store` (which must be one of this package).
 * Past `max` namespaces, a new one is a 507. `onDrop` hears of each deleted one. The lower-level form of {@link namespacedPetstore},
 * for a server that builds its handlers itself (the binary).
 */
export function withNamespaces(
  handler: FetchHandler,
  store: ResettablePetStore,
  make: NamespaceHandlerMaker,
  max = DEFAULT_MAX_NAMESPACES,
  onDrop?: (name: string) => unknown,
): FetchHandler {
  const space = namespacesOf(store)
  if (space === undefined) {
    throw new TypeError(
      'namespaces need a store this package made (memoryStore, sqliteStore, postgresStore, mysqlStore, kyselyStore), not a copy or your own',
    )
  }
  const made = new Map<string, { store: ResettablePetStore; engine: Engine }>()
  const full = (name: string) =>
    new PetstoreError(
      507,
      'too_many_namespaces',
      `No room for namespace ${JSON.stringify(name)}: ${max} namespaces exist, the most this server keeps; delete one with DELETE /ns/{name}/__petstore/namespace`,
    )
  /** The engine of `name` over `opened`, made again when the namespace's store is new (deleted and made again). */
  const engineOver = (name: string, opened: ResettablePetStore | undefined): Engine | PetstoreError => {
    if (opened === undefined) return full(name)
    let entry = made.get(name)
    if (entry?.store !== opened) {
      entry = { store: opened, engine: apiEngineOf('withNamespaces', make(opened, namespacePrefix(name), name)) }
      made.set(name, entry)
    }
    return entry.engine
  }
  const engine = namespacedEngine(apiEngineOf('withNamespaces', handler), {
    engineOf(name) {
      const opened = space.open(name, max)
      return opened instanceof Promise ? opened.then((store) => engineOver(name, store)) : engineOver(name, opened)
    },
    async drop(name) {
      made.delete(name)
      await space.drop(name)
      await onDrop?.(name)
    },
  })
  return toFetchHandler(engine)
}

/** Options of {@link namespacedPetstore}: those of `createPetstore`, and the namespaces'. */
export interface NamespacedPetstoreOptions extends PetstoreOptions {
  /** The default namespace's store, a store of this package; each namespace gets one like it, seeded alike. */
  store: ResettablePetStore
  /** How many namespaces may exist at once; past it, a new one is a 507. @default 1000 */
  maxNamespaces?: number | undefined
  /**
   * Faults of `withFaults` in every namespace. Each draws from a generator of its own, seeded by
   * `seed` and the namespace's name: a test's faults do not depend on the tests beside it.
   */
  faults?: FaultOptions | undefined
  /**
   * A request journal in each namespace, at `{prefix}/__petstore/requests`, cleared by its reset:
   * `true`, the options of each namespace's `Journal`, or a `Journal` that the default namespace
   * records into (each other namespace into one of the same size). @default off
   */
  journal?: boolean | JournalOptions | Journal | undefined
}

/**
 * A handler serving many Petstores: the default one over `store`, and `/ns/{name}/…`, each
 * namespace a Petstore of its own (pets, ids, `POST /ns/{name}/__petstore/reset`, faults, journal),
 * made on first use from `store`'s seed. `DELETE /ns/{name}/__petstore/namespace` removes one.
 *
 * @example
 * ```ts
 * import { memoryStore } from 'petstore-server'
 * import { namespacedPetstore } from 'petstore-server/testing'
 *
 * const handler = namespacedPetstore({ store: memoryStore({ pets: [{ name: 'Rex', categoryId: 1 }] }), keys: ['k'] })
 * await handler(new Request('http://x/ns/test-1/v1/pets', { headers: { authorization: 'Bearer k' } })) // → Rex alone
 * ```
 */
export function namespacedPetstore(options: NamespacedPetstoreOptions): FetchHandler {
  const { maxNamespaces, faults, journal, ...petstore } = options
  const max = wholeNumber('namespacedPetstore', 'maxNamespaces', maxNamespaces ?? DEFAULT_MAX_NAMESPACES, { min: 0 })
  const basePath = normalizeBasePath('namespacedPetstore', petstore.basePath ?? '/v1')
  const make = (store: ResettablePetStore, prefix: string, name?: string) => {
    const api = createPetstore({ ...petstore, store, basePath: `${prefix}${basePath}` || '/' })
    const seed = faults?.seed ?? 0
    const faulty =
      faults === undefined
        ? api
        : withFaults(api, { ...faults, seed: name === undefined ? seed : namespaceSeed(seed, name) })
    if (!journal) return withRoutes(faulty, [resetRoute(store, prefix)])
    const own =
      journal instanceof Journal
        ? name === undefined
          ? journal
          : new Journal({ size: journal.size, bodyBytes: journal.bodyBytes })
        : new Journal(journal === true ? {} : journal)
    return withJournal(withRoutes(faulty, [resetRoute(store, prefix, () => own.clear())]), own, { prefix })
  }
  return withNamespaces(make(options.store, ''), options.store, make, max)
}
