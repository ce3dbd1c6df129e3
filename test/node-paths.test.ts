/**
 * The whole HTTP suite over real HTTP through the Node adapter, both ways it
 * serves: `createPetstore`'s own handler, which it drives directly (no
 * `Request`/`Response` in between), and any other fetch handler, which goes
 * through `@whatwg-node/server`. Both must give every answer of DESIGN §2.
 */
import { serve } from '../adapters/node/index.js'
import type { FetchHandler } from '../src/index.js'
import { memoryStore } from '../src/index.js'
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
