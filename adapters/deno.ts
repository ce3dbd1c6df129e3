/**
 * Serving a fetch handler with Deno's own HTTP server, `Deno.serve`.
 *
 * @module
 */
import type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'
import { type BaseServeOptions, baseOptions, type Running, runtimeGlobal, stopWithin } from './shared/serving.js'

export type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'

/**
 * The members of Deno's `HttpServer` used here. Typed locally: the package's
 * own type checks run with Node's types, which know no `Deno`.
 */
export interface DenoServer {
  readonly addr: { port: number; hostname: string }
  /** Stops listening; the promise resolves once requests in flight have finished. */
  shutdown(): Promise<void>
}

interface DenoGlobal {
  serve(
    options: { port: number; hostname: string; onListen: (addr: unknown) => void },
    handler: FetchHandler,
  ): DenoServer
}

/** Options of {@link serve}. */
export type ServeOptions = BaseServeOptions

/** A running server: the underlying `Deno.serve` server is `server`. */
export type RunningServer = Running<DenoServer>

/**
 * Serves a fetch handler with `Deno.serve` and resolves once it listens.
 * Throws (rejects) anywhere but on Deno. Its `close()` cannot cut
 * connections: past `shutdownTimeoutMs` the ones still open are left to end
 * with the process.
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/deno'
 *
 * const server = await serve({ handler, port: 8080 })
 * Deno.addSignalListener('SIGTERM', () => server.close())
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { handler, port, hostname, shutdownTimeoutMs } = baseOptions('petstore-server/deno serve', options)
  const deno = runtimeGlobal<DenoGlobal>('Deno')
  const server = deno.serve(
    // The default onListen prints "Listening on …" to stdout: the program decides what to print.
    { port, hostname, onListen: () => {} },
    // Deno passes connection info as a second argument; a handler written for one argument must not see it.
    (request) => handler(request),
  )
  let closing: Promise<void> | undefined
  return {
    server,
    port: server.addr.port,
    hostname,
    close() {
      // Aborting Deno.serve's `signal` would cut connections, but once shutdown() has begun it throws instead.
      closing ??= stopWithin(shutdownTimeoutMs, () => server.shutdown())
      return closing
    },
  }
}
