/**
 * The finish step: what every answer gets on its way out, whichever route
 * or refusal made it. The default headers, the route's own, CORS, the
 * request id, HEAD's missing body; then `onResponse` and the tracing span.
 * Failures become answers here too, and a 5xx is told to `onError`.
 *
 * @module
 */
import { oneLineOf } from '../shared/petstore-error.js'
import { loadTracing, tracing } from '../shared/tracing.js'
import type { Cors } from './cors.js'
import { errorAnswer } from './errors.js'
import { type ApiAnswer, type ApiRequest, type Engine, headAnswer, PendingAnswer } from './exchange.js'
import { setDefaults } from './headers.js'
import { type OnResponse, tell } from './observe.js'
import type { MatchedRoute } from './route-table.js'
import { traced } from './server-span.js'

/** A request as the finish step reads it: the route it matched, once the engine knows. */
type Finishing = ApiRequest & { route?: MatchedRoute | undefined }

/** Tells `onError` of a failure: the error, the request, and the id its answer carries. */
export type Report = (error: unknown, request: ApiRequest, requestId: string) => void

/** The finish step of one handler. */
export interface Finish {
  /** `answer` finished for `request`: the one way out of the engine. */
  completed(answer: ApiAnswer, request: Finishing, requestId: string): ApiAnswer
  /** The answer to what was thrown; a 5xx is reported. */
  failed(error: unknown, request: ApiRequest, requestId: string): ApiAnswer
  readonly onResponse: OnResponse | undefined
}

/** What `onError` sees of a request: no body, no `Authorization` to log by mistake, the answer's request id. */
function redact(request: ApiRequest, requestId: string): Request {
  try {
    const headers = new Headers(request.toRequest().headers)
    headers.delete('authorization')
    headers.set('x-request-id', requestId)
    return new Request(request.url, { method: request.method, headers })
  } catch {
    // A request object of another implementation: its URL is still worth telling.
    return new Request(request.url, { headers: { 'x-request-id': requestId } })
  }
}

const defaultOnError = (error: unknown, request: Request) => {
  console.error(`petstore: ${request.method} ${new URL(request.url).pathname} failed: ${oneLineOf(error)}`)
}

/** Tells `onError` (by default a line on stderr), whose own failures must not change the answer. */
export function reporter(onError: ((error: unknown, request: Request) => void) | undefined): Report {
  const hook = onError ?? defaultOnError
  return (error, request, requestId) => {
    try {
      const result: unknown = hook(error, redact(request, requestId))
      // An async onError that rejects would otherwise be an unhandled rejection.
      if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(result).catch(() => {})
      }
    } catch {}
  }
}

/** The finish step for a handler with these `cors`, `onError` and `onResponse`. */
export function createFinish(cors: Cors | undefined, report: Report, onResponse: OnResponse | undefined): Finish {
  /** Only the headers every answer carries, and HEAD's without its body: where finishing itself failed. */
  function bare(answer: ApiAnswer, request: ApiRequest, requestId: string): ApiAnswer {
    setDefaults(answer.headers)
    answer.headers['x-request-id'] = requestId
    return request.method === 'HEAD' ? headAnswer(answer) : answer
  }

  function failed(error: unknown, request: ApiRequest, requestId: string): ApiAnswer {
    // Judged by the answer: even a 4xx PetstoreError that cannot be sent as it is becomes a 500, and
    // onError hears of it.
    const result = errorAnswer(error)
    if (result.status >= 500) report(error, request, requestId)
    return result
  }

  function completed(answer: ApiAnswer, request: Finishing, requestId: string): ApiAnswer {
    const { headers } = answer
    try {
      setDefaults(headers)
      const { route } = request
      if (route !== undefined) {
        if (route.headers !== undefined) Object.assign(headers, route.headers)
        if (route.setHeaders !== undefined) route.setHeaders(headers)
      }
      cors?.decorate(headers, request)
    } catch (error) {
      // A `cors.origin` function can throw: still answer, with the headers every answer carries.
      report(error, request, requestId)
      return bare(errorAnswer(error), request, requestId)
    }
    headers['x-request-id'] = requestId
    // HEAD is answered like GET, without the body.
    return request.method === 'HEAD' ? headAnswer(answer) : answer
  }

  return { completed, failed, onResponse }
}

/**
 * `engine` with its answers told to `onResponse` (unset, it costs nothing) and, once
 * @opentelemetry/api has loaded (if it is installed), a server span per request.
 */
export function observed(
  engine: Engine,
  { onResponse }: Finish,
  routeOf: (request: ApiRequest) => string | null,
): Engine {
  const told: Engine = !onResponse
    ? engine
    : (request) => {
        const started = performance.now()
        const tellOf = (answer: ApiAnswer) => {
          tell(onResponse, answer, request, answer.headers['x-request-id'] ?? '', routeOf(request), started)
          return answer
        }
        const result = engine(request)
        return result instanceof PendingAnswer ? result.map(tellOf) : tellOf(result)
      }
  // Spans only once @opentelemetry/api has loaded, if it is installed; until then and without it, one check.
  void loadTracing()
  return (request) => (tracing() ? traced(request, told, routeOf) : told(request))
}
