/** Failures inside: what a broken or unreachable store, or a bad configuration, turns into. */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createPetstore, memoryStore, type PetStore, PetstoreError } from '../src/index.js'
import { sqliteStore } from '../src/stores/sqlite.js'
import { assertError, call, KEY } from './helpers/client.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-errors-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** A store written by someone else that fails in every way a store can. */
function failingStore(failure: () => never): PetStore {
  return { create: async () => failure(), get: async () => failure(), list: async () => failure() }
}

describe('errors inside the handler', () => {
  it('answers 500 internal_error without the message, stack or SQL of the cause, and tells onError', async () => {
    const reported: unknown[] = []
    const secret = 'SELECT * FROM petstore_pets WHERE password = hunter2'
    const handler = createPetstore({
      store: failingStore(() => {
        throw new Error(secret)
      }),
      keys: [KEY],
      onError: (error) => reported.push(error),
    })
    for (const [path, init] of [
      ['/v1/pets', {}],
      ['/v1/pets/1', {}],
      ['/v1/pets', { json: { name: 'Rex', categoryId: 1 } }],
    ] as const) {
      const answer = await call(handler, path, init)
      assertError(answer, 500, 'internal_error')
      assert.ok(!answer.text.includes('hunter2') && !answer.text.includes('SELECT') && !answer.text.includes('at '))
    }
    assert.equal(reported.length, 3)
    assert.equal((reported[0] as Error).message, secret)
  })

  it('answers 503 unavailable when the store cannot be reached, and tells onError', async () => {
    const reported: unknown[] = []
    // A directory is no database file: SQLite reports SQLITE_CANTOPEN.
    const store = sqliteStore({ path: dir })
    const handler = createPetstore({ store, keys: [KEY], onError: (error) => reported.push(error) })
    assertError(await call(handler, '/v1/pets'), 503, 'unavailable')
    assertError(await call(handler, '/v1/pets', { json: { name: 'Rex', categoryId: 1 } }), 503, 'unavailable')
    assert.equal(reported.length, 2)
    await store.close?.()
  })

  it('does not report client errors to onError', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], onError: (error) => reported.push(error) })
    await call(handler, '/v1/pets', { auth: false })
    await call(handler, '/v1/pets/abc')
    await call(handler, '/v1/pets', { json: {} })
    assert.deepEqual(reported, [])
  })

  it('never throws, even when onError does', async () => {
    const handler = createPetstore({
      store: failingStore(() => {
        throw new TypeError('boom')
      }),
      keys: [KEY],
      onError: () => {
        throw new Error('the logger is broken too')
      },
    })
    assertError(await call(handler, '/v1/pets'), 500, 'internal_error')
  })

  it('lets a store answer with its own PetstoreError', async () => {
    const handler = createPetstore({
      store: failingStore(() => {
        throw PetstoreError.unavailable(new Error('pool timeout'))
      }),
      keys: [KEY],
      onError: () => {},
    })
    const answer = await call(handler, '/v1/pets')
    assertError(answer, 503, 'unavailable')
    assert.ok(!answer.text.includes('pool timeout'))
  })

  it('answers 500 when a key function throws, and the token is not in the report', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({
      store: memoryStore(),
      keys: () => {
        throw new Error('key service down')
      },
      onError: (error) => reported.push(error),
    })
    const answer = await call(handler, '/v1/pets', { headers: { authorization: 'Bearer very-secret-token' } })
    assertError(answer, 500, 'internal_error')
    assert.ok(!JSON.stringify(reported.map(String)).includes('very-secret-token'))
  })
})

describe('configuration', () => {
  it('fails closed: no keys, an empty key or a key with spaces throws at construction', () => {
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [] }), /keys/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [''] }), /key/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: ['a b'] }), /key/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: undefined as never }), /key/)
  })

  it('requires a store and a base path that starts with a slash', () => {
    assert.throws(() => createPetstore({ keys: [KEY] } as never), /store/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [KEY], basePath: 'v1' }), /basePath/)
  })
})
