/**
 * Namespaces over HTTP: `/ns/{name}/…` answered by the engine of namespace `name`, every other
 * request by the default engine. What the default engine cannot hand on (a bad name, a namespace
 * refused, the deletion of one) it answers itself, under `/ns`, so that those answers are finished
 * (request id, CORS, `onResponse`) and asked for a key like any other.
 *
 * @module
 */
import { PetstoreError } from '../shared/petstore-error.js'
import type { ApiEngine } from './engine.js'
import { errorAnswer } from './errors.js'
import { type ApiAnswer, type ApiRequest, type Engine, isPending, PendingAnswer } from './exchange.js'
import { METHODS } from './methods.js'
import type { Route } from './route-table.js'

/** Where namespaces live: `/ns/{name}/v1/pets`. */
export const NAMESPACE_ROOT = '/ns'

/** The path below a namespace that deletes it. */
export const NAMESPACE_PATH = '/__petstore/namespace'

const NAME = /^[A-Za-z0-9._-]{1,64}$/

/** What a namespace may be called, said in a 400. */
const NAMES = 'a namespace name is 1 to 64 characters of A-Z, a-z, 0-9, ".", "_" and "-"'

/** Whether `name` may name a namespace. */
export const isNamespaceName = (name: string): boolean => NAME.test(name)

/** The namespaces a router serves. */
export interface NamespaceEngines {
  /** The engine of `name`, made on first use; or the error it is refused with (the bound reached). */
  engineOf(name: string): Engine | PetstoreError | Promise<Engine | PetstoreError>
  /** Deletes `name` with its pets; nothing when it does not exist. */
  drop(name: string): Promise<void>
}

/** Why a request handed to the default engine was not served by its namespace. */
const refusals = new WeakMap<ApiRequest, unknown>()

/** The request's path and query as sent (`/ns/a/v1/pets?limit=2`). */
function targetOf(request: ApiRequest): string {
  const { target, url } = request
  if (target !== undefined) return target
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return start < 0 ? '/' : url.slice(start)
}

/** The routes under `/ns` of the default engine: what a namespace's own engine cannot answer. */
function namespaceRoutes(engines: NamespaceEngines): Route[] {
  const noRoute = new PetstoreError(404, 'not_found', 'No such route')
  const deleteOnly = new PetstoreError(405, 'method_not_allowed', 'Method not allowed; use DELETE', {
    headers: { allow: 'DELETE' },
  })
  const handler: Route['handler'] = (request, rest) => {
    if (refusals.has(request)) {
      const why = refusals.get(request)
      // Anything but an answer of ours (a database's own failure) is the engine's to answer and report.
      if (why instanceof PetstoreError) return errorAnswer(why)
      throw why
    }
    const slash = rest.indexOf('/')
    const name = slash < 0 ? rest : rest.slice(0, slash)
    if (!isNamespaceName(name)) {
      return errorAnswer(new PetstoreError(400, 'bad_request', `No namespace ${JSON.stringify(name)}: ${NAMES}`))
    }
    if (slash < 0 || rest.slice(slash) !== NAMESPACE_PATH) return errorAnswer(noRoute)
    if (request.method !== 'DELETE') return errorAnswer(deleteOnly)
    return engines.drop(name).then((): ApiAnswer => ({ status: 204, headers: {}, body: null }))
  }
  return METHODS.map((method) => ({ method, path: NAMESPACE_ROOT, below: true, name: null, handler }))
}

/**
 * The engine that sends `/ns/{name}/…` to the engine of `name` and every other request to
 * `fallback`, which gets the routes under `/ns` it answers itself.
 *
 * @example
 * ```ts
 * const engine = namespacedEngine(defaultEngine, { engineOf: (name) => engines.get(name), drop })
 * ```
 */
export function namespacedEngine(fallback: ApiEngine, engines: NamespaceEngines): Engine {
  const outer = fallback.withRoutes(namespaceRoutes(engines))
  const prefix = `${NAMESPACE_ROOT}/`
  const refuse = (request: ApiRequest, why: unknown) => {
    refusals.set(request, why)
    return outer(request)
  }
  const serve = (request: ApiRequest, found: Engine | PetstoreError) =>
    found instanceof PetstoreError ? refuse(request, found) : found(request)

  return (request) => {
    const target = targetOf(request)
    if (!target.startsWith(prefix)) return outer(request)
    let end = prefix.length
    while (end < target.length && target[end] !== '/' && target[end] !== '?') end++
    const name = target.slice(prefix.length, end)
    const rest = target.slice(end)
    const deleting = rest === NAMESPACE_PATH || rest.startsWith(`${NAMESPACE_PATH}?`)
    if (!isNamespaceName(name) || deleting) return outer(request)
    let found: ReturnType<NamespaceEngines['engineOf']>
    try {
      found = engines.engineOf(name)
    } catch (error) {
      return refuse(request, error)
    }
    if (!(found instanceof Promise)) return serve(request, found)
    const pending = new PendingAnswer()
    const give = (result: ApiAnswer | PendingAnswer) => {
      if (isPending(result)) (result as PendingAnswer).take((answer) => pending.give(answer))
      else pending.give(result)
    }
    found.then(
      (engine) => give(serve(request, engine)),
      (error) => give(refuse(request, error)),
    )
    return pending
  }
}
