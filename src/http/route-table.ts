/**
 * The routes a handler serves: the API's operations, its document, and what
 * the binary and `withDocs` add (the health check, the reference page). A
 * route is one entry, `{ method, path, handler }`; the table tells the engine
 * which handler answers, whether a key is needed, which headers every answer
 * of a route carries, and the 405 (with its `Allow`) of a method a path lacks.
 *
 * @module
 */
import { PetstoreError } from '../shared/petstore-error.js'
import { fixedAnswer } from './errors.js'
import type { ApiAnswer, ApiRequest } from './exchange.js'
import { allowOf, type Method, routeMethod } from './methods.js'
import type { Target } from './request-target.js'

/** A request as routes get it: its path and query read once. */
export type RoutedRequest = ApiRequest & { parsed: Target }

/**
 * Answers one request of a route: an answer, or a promise of one. `param` is
 * the last segment of a `{param}` route (`7` of `/v1/pets/7`), what follows
 * the path of a `below` route, else `''`.
 */
export type RouteHandler = (request: RoutedRequest, param: string) => ApiAnswer | Promise<ApiAnswer>

/**
 * One entry of the table: a method on a path, and what answers it. `name`,
 * `open` and `headers` concern the path: the entries of one path (and `below`)
 * give the same, or none.
 *
 * @example
 * ```ts
 * const health: Route = { method: 'GET', path: '/healthz', open: true, handler: () => jsonAnswer('{"status":"ok"}') }
 * ```
 */
export interface Route {
  /** A GET route answers HEAD too, without the body. */
  readonly method: Method
  /** The path, ending in `/{name}` for a route with a parameter. */
  readonly path: string
  readonly handler: RouteHandler
  /** The route's name in `onResponse` and spans; `null` for none (a catch-all). @default path */
  readonly name?: string | null
  /** The operationId this method of the path serves, for the request journal. */
  readonly operation?: string | undefined
  /** Served without a key (the document, the reference page, the health check). */
  readonly open?: boolean
  /** Matches everything below the path (`/v1/docs/x`), and the path itself where no other route has it. */
  readonly below?: boolean
  /** Headers on every answer to the path, whatever its method (a 405 too), errors included. */
  readonly headers?: Readonly<Record<string, string>>
  /** Sets headers on every answer to this method of the path (HEAD's, for GET), errors included. */
  readonly setHeaders?: ((headers: Record<string, string>) => void) | undefined
}

/** A route as the table holds it, every option given: what the engine and the finish step read. */
export class MatchedRoute {
  readonly path: string
  readonly name: string | null
  readonly open: boolean
  readonly below: boolean
  readonly headers: Readonly<Record<string, string>> | undefined
  readonly operation: string | null

  constructor(
    route: Route,
    readonly handler: RouteHandler,
    readonly setHeaders: ((headers: Record<string, string>) => void) | undefined,
  ) {
    this.path = route.path
    this.name = route.name === undefined ? route.path : route.name
    this.open = route.open === true
    this.below = route.below === true
    this.headers = route.headers
    // The 405 stand-in is made from a route of the path, but serves no operation.
    this.operation = handler === route.handler ? (route.operation ?? null) : null
  }

  /** The parameter of `path`, which this route matched: see {@link RouteHandler}. */
  paramOf(path: string): string {
    if (this.below) return path.length > this.path.length ? path.slice(this.path.length + 1) : ''
    return this.path.endsWith('}') ? path.slice(this.path.lastIndexOf('/') + 1) : ''
  }
}

/** What `onResponse` and spans call the route of a request: see {@link Route.name}. */
export const routeName = (route: MatchedRoute | undefined): string | null => (route === undefined ? null : route.name)

/** The routes of one path (and `below`), and the stand-in that answers the methods they lack with a 405. */
class PathRoutes {
  private readonly routes: readonly MatchedRoute[]
  private readonly methods: readonly string[]
  readonly notAllowed: MatchedRoute

  constructor(routes: readonly Route[]) {
    const [first] = routes as [Route]
    for (const route of routes) {
      if (route.name !== first.name || route.open !== first.open || route.headers !== first.headers) {
        throw new TypeError(`the routes of ${route.path} differ in name, open or headers`)
      }
    }
    this.methods = routes.map((route) => route.method)
    if (new Set(this.methods).size < routes.length) throw new TypeError(`a method of ${first.path} has two routes`)
    this.routes = routes.map((route) => new MatchedRoute(route, route.handler, route.setHeaders))
    const allow = allowOf(this.methods)
    const answer = fixedAnswer(
      new PetstoreError(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { headers: { allow } }),
    )
    this.notAllowed = new MatchedRoute(first, answer, undefined)
  }

  /** The route that answers `method` here: its own, or the 405's. */
  of(method: string): MatchedRoute {
    const wanted = routeMethod(method)
    for (let i = 0; i < this.routes.length; i++) if (this.methods[i] === wanted) return this.routes[i] as MatchedRoute
    return this.notAllowed
  }
}

/** Routes that replace one another in {@link RouteTable.with}: one method on one path. */
const keyOf = (route: Route) => `${route.method} ${route.below ? '*' : ''}${route.path}`

/**
 * The routes, looked up by path: one map lookup for a path without a
 * parameter, a prefix test for the few with one. Paths are matched without
 * their trailing slashes (`/v1/pets/` is `/v1/pets`).
 */
export class RouteTable {
  private readonly exact = new Map<string, PathRoutes>()
  /** Paths with a parameter, by the path before it (`/v1/pets/`). */
  private readonly parameterized: Array<readonly [prefix: string, routes: PathRoutes]> = []
  private readonly subtrees: Array<readonly [prefix: string, routes: PathRoutes, path: string]> = []
  /** Every method some route answers: what `OPTIONS *` and a CORS preflight allow. */
  readonly methods: readonly Method[]

  constructor(readonly routes: readonly Route[]) {
    const byPath = new Map<string, Route[]>()
    for (const route of routes) {
      const key = `${route.below ? '*' : ''}${route.path}`
      const same = byPath.get(key)
      if (same === undefined) byPath.set(key, [route])
      else same.push(route)
    }
    for (const same of byPath.values()) {
      const { path, below } = same[0] as Route
      const paths = new PathRoutes(same)
      const open = path.lastIndexOf('/{')
      if (below) this.subtrees.push([`${path}/`, paths, path])
      else if (open !== -1 && path.endsWith('}')) this.parameterized.push([path.slice(0, open + 1), paths])
      else this.exact.set(path, paths)
    }
    this.methods = [...new Set(routes.map((route) => route.method))]
  }

  /** The route of `path` (trailing slashes dropped) for `method`: the 405's where the path lacks it; or `undefined`. */
  match(path: string, method: string): MatchedRoute | undefined {
    const exact = this.exact.get(path)
    if (exact !== undefined) return exact.of(method)
    for (const [prefix, routes] of this.parameterized) {
      if (path.startsWith(prefix) && !path.includes('/', prefix.length)) return routes.of(method)
    }
    for (const [prefix, routes, own] of this.subtrees) {
      if (path.startsWith(prefix) || path === own) return routes.of(method)
    }
    return undefined
  }

  /** A table with `routes` besides these; a route of the same method and path (and `below`) replaces the one here. */
  with(routes: readonly Route[]): RouteTable {
    const added = new Set(routes.map(keyOf))
    return new RouteTable([...this.routes.filter((route) => !added.has(keyOf(route))), ...routes])
  }
}
