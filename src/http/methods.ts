/**
 * The HTTP methods routes answer: the one list that `Allow`, the 405, the
 * CORS preflight, `OPTIONS *` and the Node adapter's own 405 read. Adding a
 * method is one word here, and a route that answers it.
 *
 * @module
 */

/**
 * The methods a route may answer, in the order `Allow` names them. HEAD is answered by GET's route.
 * DELETE is only the request journal's, served under test control.
 */
export const METHODS = ['GET', 'POST', 'DELETE'] as const

/** A method a route answers. */
export type Method = (typeof METHODS)[number]

/** The method of the route that answers `method`: a HEAD is answered as a GET, without the body. */
export const routeMethod = (method: string): string => (method === 'HEAD' ? 'GET' : method)

/**
 * `Allow`'s value for routes of `methods`: in the order of {@link METHODS}, HEAD after GET.
 *
 * @example
 * ```ts
 * allowOf(['POST', 'GET']) // → 'GET, HEAD, POST'
 * ```
 */
export function allowOf(methods: readonly string[]): string {
  const allowed: string[] = []
  for (const method of METHODS) {
    if (!methods.includes(method)) continue
    allowed.push(method)
    if (method === 'GET') allowed.push('HEAD')
  }
  return allowed.join(', ')
}

/**
 * Every method the API answers: the `Allow` of a method no route of any path takes (CONNECT).
 * Without the journal's DELETE, which a server without test control does not serve.
 */
export const ALL_METHODS = allowOf(METHODS.filter((method) => method !== 'DELETE'))
