// Embedded path: our fetch handler mounted in a plain node:http server through
// `toNodeListener` (petstore-server/node), as the README shows for Node users.
//
//   node bench/embedded/node-listener.mjs --port 0 --key KEY --db … (see common.mjs)
import { createServer } from 'node:http'
import { toNodeListener } from 'petstore-server/node'
import { announce, embeddedHandler, exitOnSigterm, run } from './common.mjs'

run(async () => {
  const { port, handler, store } = await embeddedHandler()
  const server = createServer(toNodeListener(handler))
  server.listen(port, '127.0.0.1', () => announce('node-listener', server.address().port))
  exitOnSigterm(server, store)
})
