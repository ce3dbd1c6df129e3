/**
 * What every runtime's `serve()` shares: the options each takes, the server
 * it resolves with, finding the runtime, and a close bounded in time.
 *
 * @module
 */
import type { AnyFetchHandler as FetchHandler } from '../../src/http/fetch-handler.js'
import { checkServeOptions } from '../../src/util/option-checks.js'

/** The options every runtime's `serve()` takes. */
export interface BaseServeOptions {
  handler: FetchHandler
  /** `0` picks a free port. @default 8080 */
  port?: number | undefined
  /** @default '127.0.0.1' */
  hostname?: string | undefined
  /**
   * How long {@link Running.close} waits for requests in flight. Under
   * Kubernetes' default 30 s grace period with room to spare; the API's own
   * requests take milliseconds.
   * @default 10_000
   */
  shutdownTimeoutMs?: number | undefined
}

/** A running server, with the runtime's own as `server`. */
export interface Running<Server> {
  /** The runtime's own server. */
  server: Server
  /** The port actually bound (useful with `port: 0`). */
  port: number
  hostname: string
  /**
   * Stops accepting connections, closes idle keep-alive connections, lets
   * requests in flight finish, and resolves once they have, at the latest
   * `shutdownTimeoutMs` after the call. Then Node and Bun cut the
   * connections still open (Node says how many on stderr); Deno cannot cut
   * them once a graceful shutdown has begun, and leaves them to end with the
   * process. Calling it again returns the same promise.
   */
  close(): Promise<void>
}

/**
 * `options` checked, with the defaults filled in; `more` names the options a
 * runtime takes beside these.
 */
export function baseOptions(
  owner: string,
  options: BaseServeOptions,
  more: readonly string[] = [],
): { handler: FetchHandler; port: number; hostname: string; shutdownTimeoutMs: number } {
  checkServeOptions(owner, options, ['handler', 'port', 'hostname', 'shutdownTimeoutMs', ...more])
  const { handler, port = 8080, hostname = '127.0.0.1', shutdownTimeoutMs = 10_000 } = options
  return { handler, port, hostname, shutdownTimeoutMs }
}

/** The runtime's global (`Bun`, `Deno`); anywhere else, an Error that says which entry to use. */
export function runtimeGlobal<Global>(name: 'Bun' | 'Deno'): Global {
  const found = (globalThis as Record<string, unknown>)[name]
  if (!found) {
    const entry = `petstore-server/${name.toLowerCase()}`
    throw new Error(`${entry} needs ${name} (${name}.serve); on Node, use petstore-server/node`)
  }
  return found as Global
}

/**
 * Runs `stop` and settles as it does, or at the latest `ms` later: then `cut`
 * runs (and `stop` is still waited for), or without one the promise resolves.
 */
export function stopWithin(ms: number, stop: () => PromiseLike<void> | void, cut?: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(cut ?? resolve, ms)
    Promise.resolve(stop())
      .then(resolve, reject)
      .finally(() => clearTimeout(deadline))
  })
}
