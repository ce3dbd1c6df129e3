/**
 * The HTTP methods routes answer: the one list that `Allow`, the 405, the
 * CORS preflight, `OPTIONS *` and the Node adapter's own 405 read. Adding a
 * method is one word here, and a route that answers it.
 *
 * @module
 */

/** The methods of the API's own routes. */
const API_METHODS = ['GET', 'POST'] as const

/**
 * The methods a route may answer, in the order `Allow` names them. HEAD is answered by GET's route.
 * DELETE is test control's alone (a namespace, the journal).
 */
export const METHODS = [...API_METHODS, 'DELETE'] as const

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

/** Every method the API answers: the `Allow` of a method no route of any path takes (CONNECT). */
export const ALL_METHODS = allowOf(API_METHODS)
