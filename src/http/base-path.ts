/**
 * The base path the API is served under (`/v1` by default): what one may be,
 * and its canonical form. `createPetstore`, `withDocs` and the binary's
 * `--base-path` all check it here, so they take and refuse the same paths.
 *
 * @module
 */
import { shown } from '../util/option-checks.js'

/**
 * `'/v1///'` → `'/v1'`. A loop, not `/\/+$/`: on a path of many slashes
 * followed by something else, that regex backtracks quadratically.
 */
export function trimSlashes(path: string): string {
  let end = path.length
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--
  return path.slice(0, end)
}

/**
 * Segments a base path may hold: letters, digits, `-`, `.`, `_` and `~` (RFC 3986's unreserved
 * characters), none empty, and trailing slashes. A `?`, `#`, space or `%` makes a base path no request
 * URL can have; `:`, `*`, `(` or `+` are syntax to the router's patterns, which answered such a base's
 * document and 405s with a 500; an empty segment (`//v1`) makes `Location` and `Link` network-path
 * references, which a client resolves to the host `v1`.
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9\-._~]+)*\/*$/
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/

/** What is wrong with a base path, or `undefined` when it is usable (see PLAIN_PATH). */
export function basePathProblem(basePath: string): string | undefined {
  if (!basePath.startsWith('/') && basePath !== '') return 'must start with "/"'
  if (!PLAIN_PATH.test(basePath) || DOT_SEGMENT.test(basePath)) {
    return 'must be a path of plain segments (letters, digits, - . _ ~), such as /v1 or /api/v1'
  }
  return undefined
}

/**
 * `'/v1/'` → `'/v1'`, `'/'` → `''`; anything but a path of plain segments is
 * refused with a `TypeError` that names `owner` (`createPetstore`, `withDocs`).
 */
export function normalizeBasePath(owner: string, basePath: unknown): string {
  if (typeof basePath !== 'string') {
    throw new TypeError(`${owner}: basePath must be a string such as '/v1', got ${shown(basePath)}`)
  }
  const problem = basePathProblem(basePath)
  if (problem !== undefined) throw new TypeError(`${owner}: basePath ${problem}, got ${JSON.stringify(basePath)}`)
  return trimSlashes(basePath)
}
