// Embedded path: our fetch handler served by @whatwg-node/server's
// `createServerAdapter`, mounted in a plain node:http server, as its README shows.
//
//   node bench/embedded/whatwg-node.mjs --port 0 --key KEY --db … (see common.mjs)
import { createServer } from 'node:http'
import { createServerAdapter } from '@whatwg-node/server'
import { announce, embeddedHandler, exitOnSigterm, run } from './common.mjs'

run(async () => {
  const { port, handler, store } = await embeddedHandler()
  const server = createServer(createServerAdapter(handler))
  server.listen(port, '127.0.0.1', () => announce('whatwg-node', server.address().port))
  exitOnSigterm(server, store)
})
