/**
 * Serving a fetch handler with Deno's own HTTP server, `Deno.serve`.
 *
 * @module
 */
import type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'
import { checkServeOptions } from '../src/util/option-checks.js'

export type { FetchHandler }

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
export interface ServeOptions {
  handler: FetchHandler
  /** `0` picks a free port. @default 8080 */
  port?: number | undefined
  /** @default '127.0.0.1' */
  hostname?: string | undefined
  /**
   * How long {@link RunningServer.close} waits for requests in flight.
   * @default 10_000
   */
  shutdownTimeoutMs?: number | undefined
}

/** A running server. */
export interface RunningServer {
  /** The underlying `Deno.serve` server. */
  server: DenoServer
  /** The port actually bound (useful with `port: 0`). */
  port: number
  hostname: string
  /**
   * Stops accepting connections, closes idle keep-alive connections, lets
   * requests in flight finish, and resolves once they have, at the latest
   * `shutdownTimeoutMs` after the call. Deno cannot cut connections once a
   * graceful shutdown has begun, so past that time the ones still open are
   * left to end with the process. Calling it again returns the same promise.
   */
  close(): Promise<void>
}

/**
 * Serves a fetch handler with `Deno.serve` and resolves once it listens.
 * Throws (rejects) anywhere but on Deno.
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
  checkServeOptions('petstore-server/deno serve', options, ['handler', 'port', 'hostname', 'shutdownTimeoutMs'])
  const { handler, port = 8080, hostname = '127.0.0.1', shutdownTimeoutMs = 10_000 } = options
  const deno = (globalThis as unknown as { Deno?: DenoGlobal }).Deno
  if (!deno) throw new Error('petstore-server/deno needs Deno (Deno.serve); on Node, use petstore-server/node')
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
      closing ??= new Promise<void>((resolve, reject) => {
        // Aborting Deno.serve's `signal` would cut connections, but once shutdown() has begun it throws instead.
        const deadline = setTimeout(resolve, shutdownTimeoutMs)
        server
          .shutdown()
          .then(resolve, reject)
          .finally(() => clearTimeout(deadline))
      })
      return closing
    },
  }
}
