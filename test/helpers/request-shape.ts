/**
 * Run by test/request-shape.test.ts under `node --allow-natives-syntax`:
 * serves three requests through the Node adapter to a handler of
 * `createPetstore` whose routes keep the request views they are given, and
 * prints whether V8 keeps them (and their abort signals) with fast
 * properties, all of one hidden class. Prints JSON on stdout.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeListener } from '../../adapters/node/index.js'
import { type ApiAnswer, withRoutes } from '../../src/for-binary.js'
import type { ApiRequest } from '../../src/http/exchange.js'
import type { Route } from '../../src/http/route-table.js'
import { createPetstore, memoryStore } from '../../src/index.js'
import { fast, sameMap } from './v8-shape.js'

const seen: ApiRequest[] = []
const keep = async (request: ApiRequest): Promise<ApiAnswer> => {
  seen.push(request)
  return { status: 204, headers: {}, body: null }
}
// The API's own routes, in its table, replaced by ones that keep what the engine hands them.
const routes: Route[] = [
  { method: 'GET', path: '/v1/pets', handler: keep, open: true },
  { method: 'POST', path: '/v1/pets', handler: keep, open: true },
  { method: 'GET', path: '/v1/pets/{petId}', handler: keep, open: true },
]
const handler = withRoutes(createPetstore({ store: memoryStore(), keys: ['k'] }), routes)
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
