/**
 * OpenTelemetry, when `@opentelemetry/api` (an optional peer) is installed:
 * loading it, and the CLIENT spans of database queries. The package is
 * imported once, dynamically, when the first handler is created; without it
 * nothing is loaded and requests are served untraced. With it but no SDK
 * registered, the API's tracer makes no-op spans. The server span of a
 * request is src/http/server-span.ts's.
 *
 * @module
 */

/** The `@opentelemetry/api` module. */
export type Otel = typeof import('@opentelemetry/api')
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

/** Whether requests are traced now: the API is loaded. */
export const tracing = (): boolean => !!otel

/** The loaded API: call only when {@link tracing} is true. */
export const otelApi = (): Otel => otel as Otel

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
