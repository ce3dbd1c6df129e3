// Hono: the Petstore API under /api, beside the app's own routes (served on Node by @hono/node-server).
//
//   PORT=3000 PETSTORE_API_KEYS=secret npx tsx hono.ts
//   curl -H 'authorization: Bearer secret' http://127.0.0.1:3000/api/v1/pets
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { mount } from 'hono/mount'
import { createPetstore, memoryStore } from 'petstore-server'

const petstore = createPetstore({
  store: memoryStore(),
  keys: (process.env.PETSTORE_API_KEYS ?? 'secret').split(','),
  basePath: '/api/v1',
})

const app = new Hono()
// `replaceRequest: false` passes the request on with its full path, so the links
// in answers (Location, Link) keep the /api prefix.
app.all('/api/*', mount(petstore, { replaceRequest: false }))

// The rest of the app.
app.post('/echo', async (c) => c.json({ received: await c.req.json() }))

const server = serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}/api/v1`)
})

// Finish requests in flight, then exit.
process.once('SIGTERM', () => server.close(() => process.exit(0)))
