/**
 * `petstore-server/msw`: the Petstore API as request handlers of MSW (mswjs),
 * for `setupServer` in Node tests and `setupWorker` in the browser. Requests
 * under `baseUrl` are answered by `createPetstore`'s own handler, so a mocked
 * client meets the real validation, errors, keys, pagination and state. It
 * imports no Node module: it bundles for the browser.
 *
 * @module
 */
import { type HttpHandler, http } from 'msw'
import { createPetstore, type PetstoreOptions } from '../src/create-petstore.js'
import { basePathProblem, normalizeBasePath } from '../src/http/base-path.js'
import { memoryStore } from '../src/store/memory.js'
import type { PetStore, ResettablePetStore } from '../src/store/store.js'
import type { Journal } from '../src/testing/journal.js'
import { withJournal } from '../src/testing/journal-handler.js'
import { namespacedPetstore } from '../src/testing/namespaces.js'
import { optionsObject, redactedUrl, shown } from '../src/util/option-checks.js'

/** {@link petstoreHandlers} with `namespaces`: one handler for the default namespace and every other. */
function namespaceHandlers(options: PetstoreHandlersOptions, origin: string, path: string): HttpHandler[] {
  const { baseUrl: _, basePath: __, store, journal, namespaces, ...rest } = options
  const max = typeof namespaces === 'object' ? namespaces.max : undefined
  const handler = namespacedPetstore({
    ...rest,
    store: (store ?? memoryStore()) as ResettablePetStore,
    basePath: path || '/',
    maxNamespaces: max,
    journal,
  })
  // The API under its base path, the namespaces, and the default namespace's test control.
  const served = [
    new RegExp(`^${escaped(origin + path)}(?:/.*)?$`),
    new RegExp(`^${escaped(`${origin}/ns/`)}.*$`),
    new RegExp(`^${escaped(`${origin}/__petstore/`)}.*$`),
  ]
  return served.map((pattern) => http.all(pattern, ({ request }) => handler(request)))
}

/** Options of {@link petstoreHandlers}: those of `createPetstore`, with `baseUrl` and an optional `store`. */
export interface PetstoreHandlersOptions extends Omit<PetstoreOptions, 'store'> {
  /**
   * Where the mocked API lives, base path included: `https://api.example.test/v1`.
   * Requests under it are answered; all others are left to MSW. Its path is the
   * base path of the handler, so `basePath` need not be given (if it is, it must agree).
   */
  baseUrl: string
  /** Where pets live. @default a fresh memoryStore() for each call */
  store?: PetStore | undefined
  /**
   * Records every request under `baseUrl` into this journal (`Journal` of
   * `petstore-server/testing`), also served at `{origin}/__petstore/requests`. @default none
   */
  journal?: Journal | undefined
  /**
   * Serves namespaces too: `{origin}/ns/{name}/…` (base path after the name), each a Petstore of
   * its own made from `store`'s seed on first use, with its reset, its faults and its journal, as
   * `namespacedPetstore` of `petstore-server/testing` does; and `{origin}/__petstore/reset`.
   * `true`, or `{ max }` (how many may exist at once, 1000 by default). `store` must then be one
   * of this package's. @default off
   */
  namespaces?: boolean | { max?: number | undefined } | undefined
}

const OWNER = 'petstoreHandlers'
const EXAMPLE_URL = "'https://api.example.test/v1'"

/** `baseUrl` split into its origin and base path (`''` for a URL that ends at its host). */
function parseBaseUrl(baseUrl: unknown): { origin: string; basePath: string } {
  if (typeof baseUrl !== 'string') {
    throw new TypeError(
      `${OWNER}: baseUrl must be an absolute http(s) URL such as ${EXAMPLE_URL}, got ${shown(baseUrl)}`,
    )
  }
  // Shown without its user part, which may hold a password.
  const given = JSON.stringify(redactedUrl(baseUrl))
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`${OWNER}: baseUrl must be an absolute http(s) URL such as ${EXAMPLE_URL}, got ${given}`)
  }
  if (url.username || url.password || url.search || url.hash || baseUrl.includes('?') || baseUrl.includes('#')) {
    throw new TypeError(`${OWNER}: baseUrl must be a URL without a user, password, ? or #, got ${given}`)
  }
  const problem = basePathProblem(url.pathname)
  if (problem !== undefined) throw new TypeError(`${OWNER}: the path of baseUrl ${problem}, got ${given}`)
  return { origin: url.origin, basePath: normalizeBasePath(OWNER, url.pathname) }
}

/** `basePath`, when given, only repeats what `baseUrl` says: anything else is a contradiction. */
function checkBasePath(basePath: unknown, fromUrl: string, baseUrl: string): void {
  if (basePath === undefined) return
  const normalized = normalizeBasePath(OWNER, basePath)
  if (normalized === fromUrl) return
  throw new TypeError(
    `${OWNER}: basePath ${JSON.stringify(basePath)} contradicts baseUrl ${JSON.stringify(redactedUrl(baseUrl))}, ` +
      `whose path is ${JSON.stringify(fromUrl || '/')}; leave basePath out (the path of baseUrl is the base path)`,
  )
}

/** RegExp syntax in `text`, escaped. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/**
 * MSW request handlers that answer every request under `baseUrl` with the
 * Petstore API, through the handler `createPetstore` makes, and give back
 * its `Response` unchanged. Requests elsewhere, even on the same origin, are
 * not intercepted, so MSW's `onUnhandledRequest` applies to them. Each call
 * has its own store (a fresh `memoryStore()` unless `store` is given), so two
 * handler sets keep their pets apart. `{baseUrl}/openapi.json` is served
 * without a key; `{baseUrl}/docs` is a 404, as from `createPetstore` alone.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node'
 * import { petstoreHandlers } from 'petstore-server/msw'
 *
 * const server = setupServer(...petstoreHandlers({ baseUrl: 'https://api.example.test/v1', keys: ['test-key'] }))
 * server.listen({ onUnhandledRequest: 'error' })
 * const res = await fetch('https://api.example.test/v1/pets', { headers: { authorization: 'Bearer test-key' } })
 * await res.json() // → []
 * ```
 */
export function petstoreHandlers(options: PetstoreHandlersOptions): HttpHandler[] {
  optionsObject(OWNER, 'options', options, "{ baseUrl: 'https://api.example.test/v1', keys: ['test-key'] }")
  const { baseUrl, basePath, store, journal, namespaces, ...rest } = options
  const { origin, basePath: path } = parseBaseUrl(baseUrl)
  checkBasePath(basePath, path, baseUrl)
  if (namespaces) return namespaceHandlers(options, origin, path)
  // createPetstore checks the rest, unknown option names included.
  const api = createPetstore({ ...rest, store: store ?? memoryStore(), basePath: path || '/' })
  const handler = journal === undefined ? api : withJournal(api, journal)
  // Matched against the request's origin and path (MSW drops the query): the base path itself or below it.
  const under = new RegExp(`^${escaped(origin + path)}(?:/.*)?$`)
  const handlers = [http.all(under, ({ request }) => handler(request))]
  if (journal === undefined) return handlers
  const own = new RegExp(`^${escaped(`${origin}/__petstore/requests`)}(?:/count)?/*$`)
  return [...handlers, http.all(own, ({ request }) => handler(request))]
}
