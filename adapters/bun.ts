/**
 * Serving a fetch handler with Bun's own HTTP server, `Bun.serve`.
 *
 * @module
 */
import type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'
import { type BaseServeOptions, baseOptions, type Running, runtimeGlobal, stopWithin } from './shared/serving.js'

export type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'

/**
 * The members of Bun's `Server` used here. Typed locally: the package does
 * not depend on `@types/bun`, and its own type checks run with Node's types.
 */
export interface BunServer {
  readonly port: number
  readonly hostname: string
  /** Stops listening; the promise resolves once every connection is closed. */
  stop(closeActiveConnections?: boolean): Promise<void> | void
}

interface BunGlobal {
  serve(options: { fetch: FetchHandler; port: number; hostname: string }): BunServer
}

/** Options of {@link serve}. */
export type ServeOptions = BaseServeOptions

/** A running server: the underlying `Bun.serve` server is `server`. */
export type RunningServer = Running<BunServer>

/**
 * Serves a fetch handler with `Bun.serve` and resolves once it listens.
 * Throws (rejects) anywhere but on Bun. Its `close()` cuts the connections
 * still open at `shutdownTimeoutMs`.
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/bun'
 *
 * const server = await serve({ handler, port: 8080 })
 * process.on('SIGTERM', () => server.close())
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { handler, port, hostname, shutdownTimeoutMs } = baseOptions('petstore-server/bun serve', options)
  const bun = runtimeGlobal<BunGlobal>('Bun')
  // Bun passes the server as a second argument; a handler written for one argument must not see it.
  const server = bun.serve({ fetch: (request) => handler(request), port, hostname })
  let closing: Promise<void> | undefined
  return {
    server,
    port: server.port,
    hostname,
    close() {
      // Without `true`, stop() closes idle connections at once and waits for the others' answers;
      // stop(true) cuts what is still open, and the graceful stop() then resolves too.
      closing ??= stopWithin(
        shutdownTimeoutMs,
        () => server.stop(),
        () => void server.stop(true),
      )
      return closing
    },
  }
}
