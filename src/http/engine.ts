/**
 * The one place a request is composed: its target read and refused when
 * ambiguous, its route found in the table, the gate (base path, CORS
 * preflight, key), the route's handler, and the finish step every answer
 * goes through. Synchronous wherever the answer is known at once: no async
 * function, no await.
 *
 * @module
 */
import { PetstoreError } from '../shared/petstore-error.js'
import { trimSlashes } from './base-path.js'
import type { Cors } from './cors.js'
import { fixedAnswer } from './errors.js'
import { type ApiAnswer, type ApiRequest, type Engine, engineOf, PendingAnswer } from './exchange.js'
import { type Finish, observed } from './finish.js'
import { allowOf } from './methods.js'
import { requestId as idOf } from './request-id.js'
import { ambiguousPath } from './request-path.js'
import { parseOriginTarget, parseTarget } from './request-target.js'
import { type MatchedRoute, type Route, type RoutedRequest, RouteTable, routeName } from './route-table.js'

/** What the engine is made of. */
export interface EngineParts {
  table: RouteTable
  /** The API's base path: paths outside it are a 404 without a key asked, unless a route serves them. */
  basePath: string
  cors: Cors | undefined
  /** The key check: `undefined` lets the request in, an answer refuses it. */
  authenticate: (request: ApiRequest) => ApiAnswer | undefined | Promise<ApiAnswer | undefined>
  finish: Finish
}

/** The engine of `createPetstore`, which the binary and `withDocs` serve more routes beside. */
export interface ApiEngine extends Engine {
  readonly basePath: string
  /** The same engine with `routes` in its table too, their answers finished like the API's. */
  withRoutes(routes: readonly Route[]): ApiEngine
  /** The same engine with each route of its table replaced by what `map` makes of it (`withFaults`). */
  mapRoutes(map: (route: Route) => Route): ApiEngine
}

/** Whether `engine` is {@link ApiEngine}, one that can take more routes. */
export const isApiEngine = (engine: Engine | undefined): engine is ApiEngine =>
  typeof (engine as Partial<ApiEngine> | undefined)?.withRoutes === 'function'

/**
 * The engine of `handler`, one `createPetstore` made (or `withDocs`, faults, routes over one):
 * what `owner` adds routes to. Any other handler is a TypeError naming `owner`.
 */
export function apiEngineOf(owner: string, handler: unknown): ApiEngine {
  const engine = engineOf(handler)
  if (!isApiEngine(engine)) {
    throw new TypeError(`${owner}: the handler must be one createPetstore made (or withDocs over one)`)
  }
  return engine
}

const AMBIGUOUS_PATH =
  'The request path is ambiguous: it holds a backslash, a dot segment (. or .., also as %2e) or an encoded / or \\ (%2f, %5c)'

/** The request as the engine holds it: the target read once, and the route it matched. */
type Routed = RoutedRequest & { route?: MatchedRoute | undefined }

/** The route `request` matched, once the engine has routed it (the 405's stand-in too); else `undefined`. */
export const routeOf = (request: ApiRequest): MatchedRoute | undefined => (request as Routed).route

/** Makes the engine over `parts`: see the module's description for the order of its steps. */
export function createApiEngine(parts: EngineParts): ApiEngine {
  const { table, basePath, cors, authenticate, finish } = parts
  const basePrefix = `${basePath}/`
  const noRoute = fixedAnswer(new PetstoreError(404, 'not_found', 'No such route'))
  /** What `OPTIONS *` and a CORS preflight allow: every method of the table. */
  const allowed = `${allowOf(table.methods)}, OPTIONS`

  const dispatch = (route: MatchedRoute, request: Routed, path: string): ApiAnswer | Promise<ApiAnswer> =>
    route.handler(request, route.paramOf(path))

  /**
   * The gate, then the route: a path outside the base path that no route serves is a 404; under it,
   * a CORS preflight is answered before the key is asked, and the key before the route (so an
   * unknown route or a wrong method is a 401 without a key). Open routes ask no key.
   */
  function answer(request: Routed): ApiAnswer | Promise<ApiAnswer> {
    const { pathname } = request.parsed
    const path = trimSlashes(pathname)
    const route = table.match(path, request.method)
    request.route = route
    const under = pathname === basePath || pathname.startsWith(basePrefix)
    if (route === undefined && !under) return noRoute()
    if (cors && under && request.method === 'OPTIONS') return cors.preflight(allowed)
    if (route?.open) return dispatch(route, request, path)
    const denied = authenticate(request)
    if (denied === undefined) return route === undefined ? noRoute() : dispatch(route, request, path)
    if (denied instanceof Promise) {
      return denied.then((answer) => answer ?? (route === undefined ? noRoute() : dispatch(route, request, path)))
    }
    return denied
  }

  const ambiguous = fixedAnswer(new PetstoreError(400, 'bad_request', AMBIGUOUS_PATH))
  // Only a request read straight off a socket can carry a URL that does not parse.
  const malformed = fixedAnswer(new PetstoreError(400, 'bad_request', 'The request URL is malformed'))
  const asteriskNotOptions = fixedAnswer(
    new PetstoreError(400, 'bad_request', 'The request target * is only for OPTIONS (OPTIONS * asks about the server)'),
  )

  /**
   * A request whose target is `*` (RFC 9112, section 3.2.4), which only a socket carries: `OPTIONS *` asks what
   * the server supports at all (RFC 9110, section 9.3.7), and is told the methods of its paths, with no key asked
   * for, as a path outside the API would be; any other method with it is malformed.
   */
  function serverWide(request: ApiRequest, requestId: string): ApiAnswer {
    if (request.method !== 'OPTIONS') return finish.completed(asteriskNotOptions(), request, requestId)
    return finish.completed({ status: 204, headers: { allow: allowed }, body: null }, request, requestId)
  }

  const engine: Engine = (request) => {
    const routed = request as Routed
    const requestId = idOf(request.header('x-request-id'))
    const { target } = request
    const plain = target === undefined ? undefined : parseOriginTarget(target)
    // Refused before the URL parser rewrites it: a proxy in front reads the path as sent. The
    // origin-form target holds the same path as the URL (an authority holds no `\`, `%` or `/.`).
    // A plain target holds no `\` and no dot segment, so only a `%` in its path can make it ambiguous.
    if ((plain === undefined || plain.pathname.includes('%')) && ambiguousPath(target ?? request.url)) {
      return finish.completed(ambiguous(), request, requestId)
    }
    try {
      routed.parsed = plain ?? parseTarget(request.url)
    } catch {
      // `*` is a target of its own, not a URL: told apart here, where only what does not parse pays.
      if (request.url === '*') return serverWide(request, requestId)
      return finish.completed(malformed(), request, requestId)
    }
    let result: ApiAnswer | Promise<ApiAnswer>
    try {
      result = answer(routed)
    } catch (error) {
      result = finish.failed(error, request, requestId)
    }
    return conclude(result, routed, requestId)
  }

  /**
   * The engine's last step: at once for an answer; for a promise of one, in the reaction to it, its
   * failure answered too, and handed on in that reaction (see PendingAnswer).
   */
  function conclude(result: ApiAnswer | Promise<ApiAnswer>, request: Routed, requestId: string) {
    if (!(result instanceof Promise)) return finish.completed(result, request, requestId)
    const pending = new PendingAnswer()
    result.then(
      (answered) => pending.give(finish.completed(answered, request, requestId)),
      (error) => pending.give(finish.completed(finish.failed(error, request, requestId), request, requestId)),
    )
    return pending
  }

  const served = observed(engine, finish, (request) => routeName((request as Routed).route))
  return Object.assign(served, {
    basePath,
    withRoutes: (routes: readonly Route[]) => createApiEngine({ ...parts, table: table.with(routes) }),
    mapRoutes: (map: (route: Route) => Route) =>
      createApiEngine({ ...parts, table: new RouteTable(table.routes.map(map)) }),
  })
}
