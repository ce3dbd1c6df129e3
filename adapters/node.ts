/**
 * Mounting a fetch handler on Node's `node:http`, through `@whatwg-node/server`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServerAdapter } from '@whatwg-node/server'

/** Any web-standard fetch handler, such as the one `createPetstore` returns. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

/** A Node request listener: for `http.createServer`, Express `app.use`, or any connect-style stack. */
export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Turns a fetch handler into a Node request listener. Under Express, the full
 * original URL (`req.originalUrl`) is what the handler sees, so mounted at
 * `app.use('/api', …)` it needs `basePath: '/api/v1'`.
 *
 * @example
 * ```ts
 * app.use('/api', toNodeListener(createPetstore({ store, keys, basePath: '/api/v1' })))
 * ```
 */
export function toNodeListener(handler: FetchHandler): NodeListener {
  const listener = createServerAdapter((request: Request) => handler(request)) as unknown as NodeListener
  return (request, response) => {
    response.once('finish', () => {
      if (!request.complete) lingerThenClose(request)
    })
    listener(request, response)
  }
}

/** How long, and how many bytes, an unread request body is drained after its answer. */
const LINGER_MS = 2_000
const LINGER_BYTES = 8 * 1024 * 1024

/**
 * The answer went out before the request body was read to its end (a 413, or
 * a 401 to an upload). Closing the socket at once would make the kernel
 * reset the connection while the client is still sending, and a reset can
 * destroy the answer before the client reads it. So, like a web server's
 * lingering close, the rest of the body is read and thrown away, and the
 * connection lives on if it ends within a bounded time and size; a client
 * that goes on sending past that is cut off. Memory stays flat either way.
 */
function lingerThenClose(request: IncomingMessage): void {
  let drained = 0
  const timer = setTimeout(() => request.socket.destroy(), LINGER_MS)
  timer.unref()
  // `read()` rather than `resume()`: the handler's stream reader may still hold
  // a 'readable' listener, and while one is attached the stream never flows.
  request.on('readable', () => {
    for (let chunk: Buffer | null = request.read(); chunk !== null; chunk = request.read()) {
      drained += chunk.byteLength
      if (drained > LINGER_BYTES) {
        clearTimeout(timer)
        request.socket.destroy()
        return
      }
    }
  })
  request.once('end', () => clearTimeout(timer))
  request.read(0)
}

/** Options of {@link serve}. */
export interface ServeOptions {
  handler: FetchHandler
  /** `0` picks a free port. @default 8080 */
  port?: number
  /** @default '127.0.0.1' */
  hostname?: string
}

/** A running server. */
export interface RunningServer {
  /** The underlying `node:http` server. */
  server: Server
  /** The port actually bound (useful with `port: 0`). */
  port: number
  hostname: string
  /**
   * Stops accepting connections, lets requests in flight finish, closes idle
   * keep-alive connections, and resolves once the server is closed.
   */
  close(): Promise<void>
}

/**
 * Serves a fetch handler on `node:http` and resolves once it listens.
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/node'
 *
 * const server = await serve({ handler, port: 8080 })
 * process.on('SIGTERM', () => server.close())
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { handler, port = 8080, hostname = '127.0.0.1' } = options
  const server = createServer(toNodeListener(handler))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, hostname, () => {
      server.off('error', reject)
      resolve()
    })
  })
  let closing: Promise<void> | undefined
  return {
    server,
    port: (server.address() as AddressInfo).port,
    hostname,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        // Keep-alive sockets with no request in flight would hold close() open.
        server.closeIdleConnections()
      })
      return closing
    },
  }
}
