/**
 * The whole HTTP suite over real HTTP through the Node adapter, both ways it
 * serves: `createPetstore`'s own handler, which it drives directly (no
 * `Request`/`Response` in between), and any other fetch handler, which goes
 * through `@whatwg-node/server`. Both must give every answer of DESIGN §2.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { serve, toNodeListener } from '../adapters/node/index.js'
import type { FetchHandler } from '../src/index.js'
import { createPetstore, memoryStore } from '../src/index.js'
import { runApiSuite, type Transport } from './api.suite.js'
import { remote } from './helpers/http-checks.js'

/** Serves the handler (or a plain wrapper of it) on a free port and talks to it over HTTP. */
const overNode =
  (wrap: (handler: FetchHandler) => FetchHandler): Transport =>
  async (handler) => {
    const server = await serve({ handler: wrap(handler), port: 0 })
    return { handler: remote(`http://127.0.0.1:${server.port}`), close: () => server.close() }
  }

runApiSuite(
  'memoryStore over node:http, driven directly',
  () => memoryStore(),
  overNode((handler) => handler),
)
// A wrapper hides the engine: the adapter sees an ordinary fetch handler.
runApiSuite(
  'memoryStore over node:http, through @whatwg-node/server',
  () => memoryStore(),
  overNode((handler) => (request) => handler(request)),
)

// Under toNodeListener a middleware may run first: the headers it sets are what the API reads.
describe('toNodeListener after a middleware that sets headers', () => {
  it('reads the headers as the middleware left them', async () => {
    const listener = toNodeListener(createPetstore({ store: memoryStore(), keys: ['inner-key'] }))
    const server = createServer((request, response) => {
      // As a gateway does: the client's own credential swapped for the one the API knows.
      if (request.headers.authorization === 'Bearer outer-key') request.headers.authorization = 'Bearer inner-key'
      request.headers['idempotency-key'] = 'set-by-middleware'
      listener(request, response)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const create = () =>
        fetch(`http://127.0.0.1:${port}/v1/pets`, {
          method: 'POST',
          headers: { authorization: 'Bearer outer-key', 'content-type': 'application/json' },
          body: '{"name":"Rex","categoryId":1}',
        })
      const first = await create()
      assert.equal(first.status, 201, await first.clone().text())
      const again = await create()
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(await again.json(), await first.json())
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
