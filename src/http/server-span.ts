/**
 * The OpenTelemetry SERVER span of a request, once `@opentelemetry/api` has
 * loaded (src/shared/tracing.ts); the stores' query spans are its children.
 *
 * @module
 */
import { type Otel, otelApi } from '../shared/tracing.js'
import { type ApiAnswer, type ApiRequest, type Engine, PendingAnswer } from './exchange.js'
import { targetOf } from './observe.js'

type Span = ReturnType<ReturnType<Otel['trace']['getTracer']>['startSpan']>

let noop: unknown

/** The API's no-op tracer provider: what a fresh proxy provider delegates to while no SDK is registered. */
function noopProvider(api: Otel): unknown {
  noop ??= new api.ProxyTracerProvider().getDelegate()
  return noop
}

/**
 * Runs `answer` for `request` inside a SERVER span (the active span while it
 * runs, so that a store's own spans are its children), with the stable HTTP
 * attributes: `http.request.method`, `url.path`, `http.route`,
 * `http.response.status_code`, and for a 5xx `error.type` (the Error `code`)
 * and an error status. Never a header, a query value or a body.
 */
export function traced<R extends ApiRequest>(
  request: R,
  run: (request: R) => ReturnType<Engine>,
  routeOf: (request: R) => string | null,
): ReturnType<Engine> {
  const api = otelApi()
  const { method } = request
  let span: Span
  try {
    // No SDK registered: the global provider is a proxy with nothing behind it. One look, then the
    // request runs as it would untraced, without a no-op span made and dropped for each.
    const provider = api.trace.getTracerProvider() as { getDelegate?: () => unknown }
    if (provider.getDelegate?.() === noopProvider(api)) return run(request)
    const path = (request.target ?? targetOf(request.url)).split('?', 1)[0] ?? '/'
    const attributes = { 'http.request.method': method, 'url.path': path }
    span = api.trace.getTracer('petstore-server').startSpan(method, { kind: api.SpanKind.SERVER, attributes })
  } catch {
    // A tracer that fails must not fail the request (the engine never rejects).
    return run(request)
  }
  // No SDK registered (or sampled out): the span records nothing, and the request runs as it would untraced.
  if (!span.isRecording()) return run(request)
  const end = (answer: ApiAnswer): ApiAnswer => {
    try {
      const route = routeOf(request)
      if (route !== null) {
        span.setAttribute('http.route', route)
        span.updateName(`${method} ${route}`)
      }
      span.setAttribute('http.response.status_code', answer.status)
      if (answer.status >= 500) {
        span.setAttribute('error.type', answer.code ?? String(answer.status))
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      span.end()
    } catch {}
    return answer
  }
  return api.context.with(api.trace.setSpan(api.context.active(), span), () => {
    const result = run(request)
    return result instanceof PendingAnswer ? result.map(end) : end(result)
  })
}
