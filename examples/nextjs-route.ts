// Next.js (App Router): save as app/api/[...petstore]/route.ts to serve the API under /api/v1.
// Next.js calls the export named after the request's method and answers other methods with 405.
//
//   curl -H 'authorization: Bearer secret' http://localhost:3000/api/v1/pets
import { createPetstore, memoryStore } from 'petstore-server'

// One store per server process: in production pass sqliteStore(…) or postgresStore(…) instead.
const petstore = createPetstore({
  store: memoryStore(),
  keys: [process.env.PETSTORE_KEY ?? 'secret'],
  basePath: '/api/v1',
})

export const GET = petstore
export const HEAD = petstore
export const POST = petstore
export const OPTIONS = petstore
