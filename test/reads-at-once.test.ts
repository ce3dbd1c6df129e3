/**
 * Reads from a store that answers synchronously (memory; SQLite once its schema
 * is ready) are answered in the turn that asked: the store's `Store` calls give
 * the pet or page itself, not a promise, and so does the guarded store the
 * handler reads through. What that path must keep: the same answers over HTTP,
 * the client's abort, and a failing read turned into an Error answer.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { guardStore } from '../src/store/guarded-store.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { builtInOf, type Store } from '../src/store/store.js'
import { AUTH, KEY } from './helpers/client.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-at-once-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const PETS = [
  { name: 'Rex', categoryId: 1, status: 'sold' as const },
  { name: 'Tom', categoryId: 2 },
  { name: 'Ada', categoryId: 3, status: 'sold' as const },
]

type Handler = ReturnType<typeof createPetstore>

/** The handler's answer to `path`. */
async function ask(handler: Handler, path: string, signal?: AbortSignal) {
  const res = await handler(new Request(`http://x${path}`, { headers: AUTH, ...(signal ? { signal } : {}) }))
  return { status: res.status, body: await res.json(), headers: Object.fromEntries(res.headers) }
}

/** The `Store` a built-in store carries. */
function own(store: PetStore): Store {
  const calls = builtInOf(store)
  assert.ok(calls, 'a built-in store')
  return calls
}

/** Whether `answer` came at once (no promise), and what it was. */
const atOnce = (answer: unknown) => !(answer instanceof Promise)

/** A memory store, and a SQLite file whose pets were created through the engine (which migrates it). */
async function stores(): Promise<Array<[string, PetStore]>> {
  const sqlite = sqliteStore({ path: join(dir, `${Math.random().toString(36).slice(2)}.db`) })
  for (const pet of PETS) await sqlite.create(pet)
  return [
    ['memory', memoryStore({ pets: PETS })],
    ['SQLite', sqlite],
  ]
}

describe('reads from a store that answers synchronously', () => {
  it('are answered at once, with the same pages, pets, links and 404s', async () => {
    for (const [name, store] of await stores()) {
      const handler = createPetstore({ store, keys: [KEY] })
      // The SQLite store's hot path opens with the first call (the migration): that one waits.
      await ask(handler, '/v1/pets')
      const calls = own(store)
      assert.equal(atOnce(calls.page({ status: 'sold', limit: 1 })), true, name)
      assert.equal(atOnce(calls.get(2)), true, name)
      assert.equal(atOnce(calls.get(4)), true, name)
      const page = await ask(handler, '/v1/pets?status=sold&limit=1')
      assert.deepEqual(page.body, [{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }], name)
      const next = page.headers.link?.match(/<([^>]+)>; rel="next"/)?.[1]
      assert.ok(next, `${name}: a next link`)
      const rest = await ask(handler, next)
      assert.deepEqual(rest.body, [{ id: 3, name: 'Ada', categoryId: 3, status: 'sold' }], name)
      assert.equal(rest.headers.link, undefined, name)

      const pet = await ask(handler, '/v1/pets/2')
      assert.deepEqual(pet.body, { id: 2, name: 'Tom', categoryId: 2 }, name)
      assert.equal(pet.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT', name)

      const missing = await ask(handler, '/v1/pets/4')
      assert.deepEqual([missing.status, missing.body.code], [404, 'not_found'], name)
      await store.close?.()
    }
  })

  it('are not made for a client that has gone: 400 aborted', async () => {
    for (const [name, store] of await stores()) {
      const handler = createPetstore({ store, keys: [KEY] })
      await ask(handler, '/v1/pets')
      // The guarded store refuses at once, before the store is asked.
      const guarded = guardStore(own(store), 30_000)
      for (const read of [
        () => guarded.page({ limit: 1 }, AbortSignal.abort()),
        () => guarded.get(1, AbortSignal.abort()),
      ]) {
        assert.throws(
          read,
          (error: { status?: number; code?: string }) => error.status === 400 && error.code === 'aborted',
        )
      }
      for (const path of ['/v1/pets', '/v1/pets/1']) {
        const answer = await ask(handler, path, AbortSignal.abort())
        assert.deepEqual([answer.status, answer.body.code], [400, 'aborted'], `${name} ${path}`)
      }
      await store.close?.()
    }
  })

  it('that fail become an Error answer at once, and onError hears of it', async () => {
    const path = join(dir, 'dropped.db')
    const store = sqliteStore({ path })
    const reported: unknown[] = []
    const handler = createPetstore({ store, keys: [KEY], onError: (error) => reported.push(error) })
    assert.equal((await ask(handler, '/v1/pets')).status, 200)
    // Another connection drops the table under the prepared statements: SQLite cannot run them again.
    const { open } = await loadSqliteDriver()
    const other = open(path)
    other.prepare('drop table petstore_pets').run([])
    other.close()
    // Thrown, not a rejected promise: the failure is answered in the same turn.
    assert.throws(() => own(store).page({ limit: 1 }), /petstore_pets/)
    assert.throws(() => own(store).get(1), /petstore_pets/)
    reported.length = 0
    for (const target of ['/v1/pets', '/v1/pets/1']) {
      const answer = await ask(handler, target)
      assert.deepEqual([answer.status, answer.body.code], [500, 'internal_error'], target)
    }
    assert.equal(reported.length, 2)
    assert.match(String(reported[0]), /petstore_pets/)
    await store.close?.()
  })

  it('are not taken from a copy of a built-in store: its own methods answer', async () => {
    for (const [name, store] of await stores()) {
      await store.list({ limit: 1 }) // migrated: the original answers at once
      // A store made by spreading a built-in one is a store of its own: what it overrides must be called.
      const copy: PetStore = { ...store, get: async () => undefined, list: async () => [] }
      assert.equal(builtInOf(copy), undefined, name)
      const handler = createPetstore({ store: copy, keys: [KEY] })
      const pet = await ask(handler, '/v1/pets/1')
      assert.deepEqual(pet.status, 404, name)
      const page = await ask(handler, '/v1/pets')
      assert.deepEqual(page.body, [], name)
      await store.close?.()
    }
  })
})
