// Testing a client of the Petstore API with MSW in Node: setupServer answers its fetches with
// the real API (validation, errors, keys, pagination), each test on a fresh store.
//
//   node --import tsx --test setup-server.test.ts
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'
import { setupServer } from 'msw/node'
import { petstoreHandlers } from 'petstore-server/msw'

const baseUrl = 'https://api.example.test/v1'
const key = 'test-key'

// The code under test: in a real app, this lives in its own module.
async function allPetNames(apiUrl: string, apiKey: string): Promise<string[]> {
  const names: string[] = []
  let url: string | undefined = `${apiUrl}/pets?limit=2`
  while (url) {
    const response: Response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } })
    if (!response.ok) throw new Error(`listPets: ${response.status} ${(await response.json()).code}`)
    names.push(...(await response.json()).map((pet: { name: string }) => pet.name))
    // Link: </v1/pets?…&cursor=…>; rel="next", relative to the API's origin.
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
    url = next && new URL(next, apiUrl).href
  }
  return names
}

const server = setupServer()
before(() => server.listen({ onUnhandledRequest: 'error' }))
// A fresh API (and store) for each test.
afterEach(() => server.resetHandlers())
after(() => server.close())

test('reads every page of the list', async () => {
  server.use(...petstoreHandlers({ baseUrl, keys: [key] }))
  for (const name of ['Rex', 'Tom', 'Ada']) {
    const created = await fetch(`${baseUrl}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 }),
    })
    assert.equal(created.status, 201)
  }
  assert.deepEqual(await allPetNames(baseUrl, key), ['Rex', 'Tom', 'Ada'])
})

test('starts empty', async () => {
  server.use(...petstoreHandlers({ baseUrl, keys: [key] }))
  assert.deepEqual(await allPetNames(baseUrl, key), [])
})

test('tells a wrong key apart', async () => {
  server.use(...petstoreHandlers({ baseUrl, keys: [key] }))
  await assert.rejects(allPetNames(baseUrl, 'wrong-key'), /listPets: 401 unauthorized/)
})
