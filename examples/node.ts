// Plain Node: the Petstore API on node:http, with pets in memory.
//
//   PORT=8080 PETSTORE_API_KEYS=secret npx tsx node.ts
//   curl -H 'authorization: Bearer secret' http://127.0.0.1:8080/v1/pets
import { createPetstore, memoryStore } from 'petstore-server'
import { serve } from 'petstore-server/node'

const handler = createPetstore({ store: memoryStore(), keys: (process.env.PETSTORE_API_KEYS ?? 'secret').split(',') })
const server = await serve({ handler, port: Number(process.env.PORT ?? 8080) })
console.log(`listening on http://127.0.0.1:${server.port}/v1`)

// Finish requests in flight, then exit.
process.once('SIGTERM', () => server.close().then(() => process.exit(0)))
