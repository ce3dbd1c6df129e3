/**
 * Reads from a store that answers synchronously (memory; SQLite once its schema
 * is ready) are answered in the turn that asked: the engine returns the answer
 * itself, not a promise. What that path must keep: the same answers, the
 * client's abort, and a failing read turned into an Error answer.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createEngine } from '../src/create-petstore.js'
import { type ApiAnswer, fromRequest, pending } from '../src/http/exchange.js'
import { memoryStore, type PetStore } from '../src/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { AUTH, KEY } from './helpers/client.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-at-once-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const PETS = [
  { name: 'Rex', categoryId: 1, status: 'sold' as const },
  { name: 'Tom', categoryId: 2 },
  { name: 'Ada', categoryId: 3, status: 'sold' as const },
]

const request = (path: string, signal?: AbortSignal) =>
  fromRequest(new Request(`http://x${path}`, { headers: AUTH, ...(signal ? { signal } : {}) }))

/** The engine's answer to `path`, and whether it came at once. */
async function ask(engine: ReturnType<typeof createEngine>, path: string, signal?: AbortSignal) {
  const result = engine(request(path, signal))
  const atOnce = !pending(result)
  const answer: ApiAnswer = await result
  return { atOnce, status: answer.status, body: JSON.parse(answer.body ?? 'null'), headers: answer.headers }
}

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
      const engine = createEngine({ store, keys: [KEY] })
      // The SQLite store's hot path opens with the first call (the migration): that one waits.
      await ask(engine, '/v1/pets')
      const page = await ask(engine, '/v1/pets?status=sold&limit=1')
      assert.equal(page.atOnce, true, name)
      assert.deepEqual(page.body, [{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }], name)
      const next = page.headers.link?.match(/<([^>]+)>; rel="next"/)?.[1]
      assert.ok(next, `${name}: a next link`)
      const rest = await ask(engine, next)
      assert.equal(rest.atOnce, true, name)
      assert.deepEqual(rest.body, [{ id: 3, name: 'Ada', categoryId: 3, status: 'sold' }], name)
      assert.equal(rest.headers.link, undefined, name)

      const pet = await ask(engine, '/v1/pets/2')
      assert.equal(pet.atOnce, true, name)
      assert.deepEqual(pet.body, { id: 2, name: 'Tom', categoryId: 2 }, name)
      assert.equal(pet.headers.sunset, 'Thu, 05 Dec 2030 00:00:00 GMT', name)

      const missing = await ask(engine, '/v1/pets/4')
      assert.deepEqual([missing.atOnce, missing.status, missing.body.code], [true, 404, 'not_found'], name)
      await store.close?.()
    }
  })

  it('are not made for a client that has gone: 400 aborted', async () => {
    for (const [name, store] of await stores()) {
      const engine = createEngine({ store, keys: [KEY] })
      await ask(engine, '/v1/pets')
      for (const path of ['/v1/pets', '/v1/pets/1']) {
        const answer = await ask(engine, path, AbortSignal.abort())
        assert.deepEqual([answer.atOnce, answer.status, answer.body.code], [true, 400, 'aborted'], `${name} ${path}`)
      }
      await store.close?.()
    }
  })

  it('that fail become an Error answer at once, and onError hears of it', async () => {
    const path = join(dir, 'dropped.db')
    const store = sqliteStore({ path })
    const reported: unknown[] = []
    const engine = createEngine({ store, keys: [KEY], onError: (error) => reported.push(error) })
    assert.equal((await ask(engine, '/v1/pets')).status, 200)
    // Another connection drops the table under the prepared statements: SQLite cannot run them again.
    const { open } = await loadSqliteDriver()
    const other = open(path)
    other.prepare('drop table petstore_pets').run([])
    other.close()
    for (const target of ['/v1/pets', '/v1/pets/1']) {
      const answer = await ask(engine, target)
      assert.deepEqual([answer.atOnce, answer.status, answer.body.code], [true, 500, 'internal_error'], target)
    }
    assert.equal(reported.length, 2)
    assert.match(String(reported[0]), /petstore_pets/)
    await store.close?.()
  })

  it('are not taken from a copy of a built-in store: its own methods answer', async () => {
    for (const [name, store] of await stores()) {
      await store.list({ limit: 1 }) // migrated: the original answers at once
      // A store made by spreading a built-in one copies its symbols too; what it overrides must be called.
      const copy: PetStore = { ...store, get: async () => undefined, list: async () => [] }
      const engine = createEngine({ store: copy, keys: [KEY] })
      const pet = await ask(engine, '/v1/pets/1')
      assert.deepEqual([pet.atOnce, pet.status], [false, 404], name)
      const page = await ask(engine, '/v1/pets')
      assert.deepEqual([page.atOnce, page.body], [false, []], name)
      await store.close?.()
    }
  })
})
