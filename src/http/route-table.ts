/**
 * The routes a handler serves: the API's operations, its document, and what
 * the binary and `withDocs` add (the health check, the reference page). One
 * table tells the engine which handler answers, whether a key is needed,
 * which headers every answer of a route carries, and the `Allow` of a 405.
 *
 * @module
 */
import type { Deferred } from './deferred.js'
import type { ApiAnswer, ApiRequest } from './exchange.js'
import type { Target } from './request-target.js'

/** What a route's handler gives: an answer, a promise of one, or an answer that waits on a body. */
export type Outcome = ApiAnswer | Promise<ApiAnswer> | Deferred<string>

/** A request as routes get it: its path and query read once. */
export type RoutedRequest = ApiRequest & { parsed: Target }

/**
 * Answers one request of a route. `param` is the last segment of a
 * `{param}` route (`7` of `/v1/pets/7`), what follows the path of a `below`
 * route, else `''`.
 */
export type RouteHandler = (request: RoutedRequest, param: string) => Outcome

/** One entry of the table. */
export interface Route {
  /** The path, ending in `/{name}` for a route with a parameter. */
  readonly path: string
  /** The route's name in `onResponse` and spans; `null` for none (a catch-all). @default path */
  readonly name?: string | null
  /** Answers GET, and HEAD as GET without the body. */
  readonly get?: RouteHandler
  readonly post?: RouteHandler
  /** Served without a key (the document, the reference page, the health check). */
  readonly open?: boolean
  /** Matches everything below the path (`/v1/docs/x`), and the path itself where no other route has it. */
  readonly below?: boolean
  /** Headers on every answer of the route, errors included. */
  readonly headers?: Readonly<Record<string, string>>
  /** Headers on every answer to a read (GET, HEAD) of the route: the deprecation headers. */
  readonly readHeaders?: (headers: Record<string, string>) => void
}

/** What `onResponse` and spans call the route of a request: see {@link Route.name}. */
export const routeName = (route: Route | undefined): string | null =>
  route === undefined ? null : route.name === undefined ? route.path : route.name

/** The methods a route answers, for `Allow`. */
export const allowOf = (route: Route): string =>
  [route.get && 'GET, HEAD', route.post && 'POST'].filter(Boolean).join(', ')

/**
 * The routes, looked up by path: one map lookup for a route without a
 * parameter, a prefix test for the few with one. Paths are matched without
 * their trailing slashes (`/v1/pets/` is `/v1/pets`).
 */
export class RouteTable {
  private readonly exact = new Map<string, Route>()
  /** Routes with a parameter, by the path before it (`/v1/pets/`). */
  private readonly parameterized: Array<readonly [prefix: string, route: Route]> = []
  private readonly subtrees: Array<readonly [prefix: string, route: Route]> = []

  constructor(readonly routes: readonly Route[]) {
    for (const route of routes) {
      const open = route.path.lastIndexOf('/{')
      if (route.below) this.subtrees.push([`${route.path}/`, route])
      else if (open !== -1 && route.path.endsWith('}')) this.parameterized.push([route.path.slice(0, open + 1), route])
      else this.exact.set(route.path, route)
    }
  }

  /** The route of `path` (trailing slashes dropped), or `undefined`. */
  match(path: string): Route | undefined {
    const exact = this.exact.get(path)
    if (exact !== undefined) return exact
    for (const [prefix, route] of this.parameterized) {
      if (path.startsWith(prefix) && !path.includes('/', prefix.length)) return route
    }
    for (const [prefix, route] of this.subtrees) if (path.startsWith(prefix) || path === route.path) return route
    return undefined
  }

  /** The parameter of `path` in `route` (which it matched): see {@link RouteHandler}. */
  static param(route: Route, path: string): string {
    if (route.below) return path.length > route.path.length ? path.slice(route.path.length + 1) : ''
    return route.path.endsWith('}') ? path.slice(route.path.lastIndexOf('/') + 1) : ''
  }

  /** A table with `routes` besides these; a route of the same path (and `below`) replaces the one here. */
  with(routes: readonly Route[]): RouteTable {
    const key = (route: Route) => `${route.below ? '*' : ''}${route.path}`
    const added = new Set(routes.map(key))
    return new RouteTable([...this.routes.filter((route) => !added.has(key(route))), ...routes])
  }
}
