/**
 * OpenTelemetry server spans, when `@opentelemetry/api` (an optional peer) is
 * installed. The package is imported once, dynamically, when the first
 * handler is created; without it nothing is loaded and requests are served
 * untraced. With it but no SDK registered, the API's tracer makes no-op spans.
 *
 * @module
 */
import type { ApiRequest, Engine } from './exchange.js'
import { targetOf } from './observe.js'

type Otel = typeof import('@opentelemetry/api')
type Span = ReturnType<ReturnType<Otel['trace']['getTracer']>['startSpan']>

/** A span this module started, as the stores hold it: opaque. */
export type QuerySpan = Span

/** The API once loaded; `null` when it is not installed; `undefined` until the import settles. */
let otel: Otel | null | undefined
let loading: Promise<unknown> | undefined

/**
 * The specifier as a variable, not a literal: a bundler (esbuild for a Worker, webpack, Vite) then
 * leaves the import alone, so the optional peer is neither pulled into a bundle because it happens
 * to be installed (it was 12 kB of a 27 kB Worker) nor a build error where it is not. At run time
 * it resolves as any package does; where it cannot (a Worker), requests are served untraced.
 */
const OTEL_API: string = '@opentelemetry/api'

/** Starts loading `@opentelemetry/api`, once per process; resolves when it is known whether it is there. */
export function loadTracing(): Promise<unknown> {
  loading ??= import(/* webpackIgnore: true */ /* @vite-ignore */ OTEL_API).then(
    (loaded: Otel & { default?: Otel }) => {
      // The namespace (ESM, or CommonJS through Node's interop); its `default` lacks SpanKind and friends.
      otel = loaded.SpanKind ? loaded : (loaded.default ?? null)
    },
    () => {
      otel = null
    },
  )
  return loading
}

let noop: unknown

/** The API's no-op tracer provider: what a fresh proxy provider delegates to while no SDK is registered. */
function noopProvider(api: Otel): unknown {
  noop ??= new api.ProxyTracerProvider().getDelegate()
  return noop
}

/** Whether requests are traced now: the API is loaded. */
export const tracing = (): boolean => !!otel

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
  const api = otel as Otel
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
  return api.context.with(api.trace.setSpan(api.context.active(), span), async () => {
    try {
      const result = await run(request)
      const route = routeOf(request)
      if (route !== null) {
        span.setAttribute('http.route', route)
        span.updateName(`${method} ${route}`)
      }
      span.setAttribute('http.response.status_code', result.status)
      if (result.status >= 500) {
        span.setAttribute('error.type', result.code ?? String(result.status))
        span.setStatus({ code: api.SpanStatusCode.ERROR })
      }
      return result
    } finally {
      span.end()
    }
  })
}

/**
 * A CLIENT span for one database query, child of the active span (the
 * request's server span), or `undefined` when that span records nothing: no
 * SDK, sampled out, or no request around the query (a migration at startup).
 * Call only when {@link tracing} is true. Never throws.
 */
export function startQuerySpan(name: string, attributes: Readonly<Record<string, string>>): Span | undefined {
  try {
    const api = otel as Otel
    const parent = api.trace.getActiveSpan()
    if (parent === undefined || !parent.isRecording()) return undefined
    return api.trace.getTracer('petstore-server').startSpan(name, { kind: api.SpanKind.CLIENT, attributes })
  } catch {
    return undefined
  }
}

/**
 * Ends a span of {@link startQuerySpan}; a failed query gets `error.type`
 * (the driver's error code, or the error's class name; never its message,
 * which can quote a value) and an error status.
 */
export function endQuerySpan(span: Span, error?: unknown): void {
  try {
    if (error !== undefined) {
      const code = (error as { code?: unknown } | null)?.code
      const type = typeof code === 'string' || typeof code === 'number' ? String(code) : (error as Error)?.name
      span.setAttribute('error.type', type || 'Error')
      span.setStatus({ code: (otel as Otel).SpanStatusCode.ERROR })
    }
    span.end()
  } catch {}
}
