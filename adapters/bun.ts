/**
 * Serving a fetch handler with Bun's own HTTP server, `Bun.serve`.
 *
 * @module
 */
import type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'
import { checkServeOptions } from '../src/util/option-checks.js'

export type { FetchHandler }

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
export interface ServeOptions {
  handler: FetchHandler
  /** `0` picks a free port. @default 8080 */
  port?: number | undefined
  /** @default '127.0.0.1' */
  hostname?: string | undefined
  /**
   * How long {@link RunningServer.close} lets requests in flight finish before
   * it cuts the connections still open. @default 10_000
   */
  shutdownTimeoutMs?: number | undefined
}

/** A running server. */
export interface RunningServer {
  /** The underlying `Bun.serve` server. */
  server: BunServer
  /** The port actually bound (useful with `port: 0`). */
  port: number
  hostname: string
  /**
   * Stops accepting connections, closes idle keep-alive connections, lets
   * requests in flight finish, and resolves once every connection is closed,
   * at the latest `shutdownTimeoutMs` after the call: then the connections
   * still open are cut. Calling it again returns the same promise.
   */
  close(): Promise<void>
}

/**
 * Serves a fetch handler with `Bun.serve` and resolves once it listens.
 * Throws (rejects) anywhere but on Bun.
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
  checkServeOptions('petstore-server/bun serve', options, ['handler', 'port', 'hostname', 'shutdownTimeoutMs'])
  const { handler, port = 8080, hostname = '127.0.0.1', shutdownTimeoutMs = 10_000 } = options
  const bun = (globalThis as unknown as { Bun?: BunGlobal }).Bun
  if (!bun) throw new Error('petstore-server/bun needs Bun (Bun.serve); on Node, use petstore-server/node')
  // Bun passes the server as a second argument; a handler written for one argument must not see it.
  const server = bun.serve({ fetch: (request) => handler(request), port, hostname })
  let closing: Promise<void> | undefined
  return {
    server,
    port: server.port,
    hostname,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        // stop(true) cuts what is still open; the graceful stop() below then resolves too.
        const deadline = setTimeout(() => void server.stop(true), shutdownTimeoutMs)
        // Without `true`, stop() closes idle connections at once and waits for the others' answers.
        Promise.resolve(server.stop())
          .then(resolve, reject)
          .finally(() => clearTimeout(deadline))
      })
      return closing
    },
  }
}
