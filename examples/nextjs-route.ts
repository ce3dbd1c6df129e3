// Next.js (App Router): save as app/api/[...petstore]/route.ts to serve the API under /api/v1.
// Next.js calls the export named after the request's method and answers other methods with 405.
//
//   curl -H 'authorization: Bearer secret' http://localhost:3000/api/v1/pets
import { createPetstore, memoryStore } from 'petstore-server'

// One store per server process: in production pass sqliteStore(…) or postgresStore(…) instead.
const petstore = createPetstore({
  store: memoryStore(),
  keys: (process.env.PETSTORE_API_KEYS ?? 'secret').split(','),
  basePath: '/api/v1',
})

export const GET = petstore
export const HEAD = petstore
export const POST = petstore
// CORS preflights, once `cors` is set; without it the API answers OPTIONS as it does other
// methods it does not serve (a 401 without a key, a 405 with one), not Next.js's own 204.
export const OPTIONS = petstore
