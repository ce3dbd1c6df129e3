/**
 * The options of `createPetstore`, and their checks: a mistake is a clear
 * error at construction, never a 500 on every request.
 *
 * @module
 */
import type { KeyCheck } from './api/auth.js'
import type { ServerEntry } from './api/openapi.js'
import { trimSlashes } from './http/base-path.js'
import type { CorsOptions } from './http/cors.js'
import type { OnResponse } from './http/observe.js'
import type { PetStore } from './store/store.js'
import { redactedUrl, shown } from './util/option-checks.js'

/** Options of `createPetstore`. */
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
  /**
   * How long a create's `Idempotency-Key` is kept, in milliseconds: a retry with the same key
   * within it answers the first pet (marked `Idempotent-Replayed: true`); after it, the key
   * creates again. A whole number from 1 to 31622400000 (366 days). See docs/testing-clients.md.
   * @default 86400000 (24 hours)
   * @example
   * ```ts
   * idempotencyTtl: 60 * 60 * 1000 // keys kept an hour
   * ```
   */
  idempotencyTtl?: number | undefined
}

/** The longest `idempotencyTtl`: 366 days, in ms. Longer is more likely seconds taken for ms than a plan. */
export const MAX_IDEMPOTENCY_TTL_MS = 366 * 24 * 60 * 60 * 1000

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

/** The options `createPetstore` knows: any other name is a mistake (`basepath`, `key`). */
export const OPTION_NAMES = [
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
  'idempotencyTtl',
] as const

/** The store, if it is one: its absence or a wrong value would be a 500 on every request. */
export function checkStore(store: unknown): PetStore {
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
export function normalizeServers(servers: readonly ServerEntry[] | undefined): ServerEntry[] | undefined {
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
