// Embedded path: our fetch handler served by @hono/node-server's
// `serve({ fetch })`, what a Hono app embedding us runs on under Node.
//
//   node bench/embedded/hono-node-server.mjs --port 0 --key KEY --db … (see common.mjs)
import { serve } from '@hono/node-server'
import { announce, embeddedHandler, exitOnSigterm, run } from './common.mjs'

run(async () => {
  const { port, handler, store } = await embeddedHandler()
  const server = serve({ fetch: handler, port, hostname: '127.0.0.1' }, (info) =>
    announce('hono-node-server', info.port),
  )
  exitOnSigterm(server, store)
})
