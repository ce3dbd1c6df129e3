// Fastify: the Petstore API under /api, beside the app's own routes and their JSON parser.
//
//   PORT=3000 PETSTORE_API_KEYS=secret npx tsx fastify.ts
//   curl -H 'authorization: Bearer secret' http://127.0.0.1:3000/api/v1/pets
import Fastify from 'fastify'
import { createPetstore, memoryStore } from 'petstore-server'
import { toNodeListener } from 'petstore-server/node'

const petstore = toNodeListener(
  createPetstore({
    store: memoryStore(),
    keys: (process.env.PETSTORE_API_KEYS ?? 'secret').split(','),
    basePath: '/api/v1',
  }),
)

const app = Fastify()
// A plugin of its own, so that only these routes lose Fastify's body parsers.
await app.register(async (api) => {
  // Leave bodies unread: the API reads (and limits) them itself.
  api.removeAllContentTypeParsers()
  api.addContentTypeParser('*', (_request, _payload, done) => done(null))
  api.all('/api/*', (request, reply) => {
    // The API answers on Node's own response object, so Fastify must not answer too.
    reply.hijack()
    petstore(request.raw, reply.raw)
  })
})

// The rest of the app, with Fastify's JSON parser.
app.post('/echo', async (request) => ({ received: request.body }))

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on ${address}/api/v1`)

// Finish requests in flight, then exit.
process.once('SIGTERM', () => app.close().then(() => process.exit(0)))
