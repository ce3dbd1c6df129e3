// Express: the Petstore API under /api, beside the app's own routes and their JSON parser.
//
//   PORT=3000 PETSTORE_API_KEYS=secret npx tsx express.ts
//   curl -H 'authorization: Bearer secret' http://127.0.0.1:3000/api/v1/pets
import type { AddressInfo } from 'node:net'
import express from 'express'
import { createPetstore, memoryStore } from 'petstore-server'
import { toNodeListener } from 'petstore-server/node'

const petstore = createPetstore({
  store: memoryStore(),
  keys: (process.env.PETSTORE_API_KEYS ?? 'secret').split(','),
  // Express hands a mounted app the full URL, so the base path includes the mount point.
  basePath: '/api/v1',
})

const app = express()
// Before any body parser: the API reads (and limits) request bodies itself, and a
// parser that ran first would leave it an empty stream.
app.use('/api', toNodeListener(petstore))

// The rest of the app, with Express's own JSON parser.
app.use(express.json())
app.post('/echo', (request, response) => {
  response.json({ received: request.body })
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`)
})

// Finish requests in flight, then exit.
process.once('SIGTERM', () => server.close(() => process.exit(0)))
