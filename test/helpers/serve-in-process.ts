/**
 * `serve()` in the test's own process, on a free port, with the API on a
 * memory store: for the timing tests, whose limits are a second or less.
 *
 * @module
 */
import type http from 'node:http'
import { type RunningServer, type ServeOptions, serve } from '../../adapters/node/index.js'
import { createPetstore, memoryStore } from '../../src/index.js'

const running: RunningServer[] = []

/** A server with `options` over the defaults, answering key `key`; {@link closeInProcess} closes it. */
export async function serveInProcess(key: string, options: Partial<ServeOptions>): Promise<RunningServer> {
  const server = await serve({ handler: createPetstore({ store: memoryStore(), keys: [key] }), port: 0, ...options })
  running.push(server)
  return server
}

/** Closes every server {@link serveInProcess} started, dropping connections still open (held ones included). */
export async function closeInProcess(): Promise<void> {
  const servers = running.splice(0)
  for (const server of servers) server.server.closeAllConnections()
  await Promise.all(servers.map((server) => server.close()))
}

/** Open connections of `server`, as Node counts them against `maxConnections`. */
export function connections(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  )
}
