// Testing code that serves the Petstore API, without a database or a server: the app takes
// its store as a parameter, production passes sqliteStore(…) or postgresStore(…), and each
// test passes a fresh memoryStore, seeded with what it needs. The handler is a function,
// so the tests call it with Requests.
//
//   node --import tsx --test testing-with-memory-store.test.ts
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPetstore, type FetchHandler, memoryStore, type PetStore, PetstoreError } from 'petstore-server'

// The code under test: in a real app, this lives in its own module.
function createApp(store: PetStore, onError?: (error: unknown) => void): FetchHandler {
  return createPetstore({ store, keys: ['test-key'], onError })
}

const authorization = 'Bearer test-key'
const get = (app: FetchHandler, path: string) =>
  app(new Request(`http://localhost${path}`, { headers: { authorization } }))

test('lists the pets the test seeded', async () => {
  const app = createApp(
    memoryStore({
      pets: [
        { name: 'Rex', categoryId: 1, status: 'available' },
        { name: 'Tom', categoryId: 2, status: 'sold' },
      ],
    }),
  )
  const response = await get(app, '/v1/pets?status=sold')
  assert.equal(response.status, 200)
  assert.deepEqual(await response.json(), [{ id: 2, name: 'Tom', categoryId: 2, status: 'sold' }])
})

test('a pet created through the API is in the store', async () => {
  const store = memoryStore()
  const app = createApp(store)
  const created = await app(
    new Request('http://localhost/v1/pets', {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', categoryId: 3 }),
    }),
  )
  assert.equal(created.status, 201)
  const pet = await created.json()
  assert.deepEqual(await store.get(pet.id), { id: pet.id, name: 'Ada', categoryId: 3 })
})

test('each test has its own store', async () => {
  const response = await get(createApp(memoryStore()), '/v1/pets')
  assert.deepEqual(await response.json(), [])
})

test('a database that is down gives a 503, and the app hears why', async () => {
  const errors: unknown[] = []
  // Any object with the PetStore methods is a store: this one fails like an unreachable database.
  const down: PetStore = {
    ...memoryStore(),
    list: async () => {
      throw PetstoreError.unavailable(new Error('connect ECONNREFUSED'))
    },
  }
  const app = createApp(down, (error) => errors.push(error))
  const response = await get(app, '/v1/pets')
  assert.equal(response.status, 503)
  assert.equal((await response.json()).code, 'unavailable')
  assert.equal(errors.length, 1)
})
