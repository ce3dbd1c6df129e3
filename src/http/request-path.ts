/**
 * Paths that a proxy in front could read differently from this server, and
 * which the API therefore refuses rather than normalizes.
 *
 * @module
 */

/**
 * Up to the query: a `\` anywhere, an encoded `/` or `\` (`%2f`, `%5c`), or a
 * dot segment (`.` or `..`, in any mix of `.` and `%2e`). The WHATWG URL
 * parser turns `\` into `/` and resolves dot segments (decoding `%2e` for
 * it), so `/v1/pets\1` would be pet 1 and `/v1/pets/%2e%2e/%2e%2e/healthz`
 * would be `/healthz`, where a proxy matching the path as sent sees neither.
 */
const AMBIGUOUS = /^[^?#]*?(?:\\|%2f|%5c|\/(?:\.|%2e){1,2}(?:[/?#]|$))/i

/**
 * Whether the path of `url`, as the client sent it, is one the URL parser
 * would rewrite (or a proxy might decode): see {@link AMBIGUOUS}. A `Request`
 * built by a runtime has had its URL parsed already, so only `%2f` and `%5c`
 * can still show there.
 *
 * @example
 * ```ts
 * ambiguousPath('http://x/v1/pets/%2e%2e/healthz') // → true
 * ambiguousPath('http://x/v1/pets/1?status=a.b') // → false
 * ```
 */
export function ambiguousPath(url: string): boolean {
  // Most URLs hold none of the three: a few fast scans spare them the regex.
  if (!url.includes('\\') && !url.includes('%') && !url.includes('/.')) return false
  return AMBIGUOUS.test(url)
}
