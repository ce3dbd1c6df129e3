/**
 * Run by test/request-shape.test.ts under `node --allow-natives-syntax`:
 * serves three requests through the Node adapter to an engine that keeps
 * the request views it is given, and prints whether V8 keeps them (and
 * their abort signals) with fast properties, all of one hidden class.
 * Prints JSON on stdout.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeListener } from '../../adapters/node/index.js'
import { type ApiAnswer, type ApiRequest, ENGINE } from '../../src/http/exchange.js'
import { fast, sameMap } from './v8-shape.js'

const seen: ApiRequest[] = []
const engine = async (request: ApiRequest): Promise<ApiAnswer> => {
  seen.push(request)
  return { status: 204, headers: {}, body: null }
}
const handler = Object.assign(async () => new Response(null), { [ENGINE]: engine })
const server = createServer(toNodeListener(handler)).listen(0, '127.0.0.1')
await once(server, 'listening')
const { port } = server.address() as AddressInfo
for (const [path, method] of [
  ['/v1/pets', 'GET'],
  ['/v1/pets/7?x=1', 'HEAD'],
  ['/v1/pets', 'POST'],
] as const) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, body: method === 'POST' ? '{}' : undefined })
  await res.arrayBuffer()
}
server.close()
const every = (pick: (request: ApiRequest) => unknown) => ({
  fast: seen.every((request) => fast(pick(request))),
  oneMap: seen.every((request) => sameMap(pick(seen[0]!), pick(request))),
})
process.stdout.write(
  JSON.stringify({ requests: seen.length, request: every((r) => r), signal: every((r) => r.signal) }),
)
