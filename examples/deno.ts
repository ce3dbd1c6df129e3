// Deno: the Petstore API on Deno.serve, with pets in memory.
//
//   PORT=8080 PETSTORE_API_KEYS=secret deno run --allow-net --allow-env deno.ts
//   curl -H 'authorization: Bearer secret' http://127.0.0.1:8080/v1/pets
import { createPetstore, memoryStore } from 'petstore-server'
import { serve } from 'petstore-server/deno'

const handler = createPetstore({
  store: memoryStore(),
  keys: (Deno.env.get('PETSTORE_API_KEYS') ?? 'secret').split(','),
})
const server = await serve({ handler, port: Number(Deno.env.get('PORT') ?? 8080) })
console.log(`listening on http://127.0.0.1:${server.port}/v1`)

// Finish requests in flight, then exit.
Deno.addSignalListener('SIGTERM', () => server.close().then(() => Deno.exit(0)))
