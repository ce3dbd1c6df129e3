/**
 * A cursor taken before a reset is refused after it, over HTTP on the binary: a 400 naming
 * `cursor` that says the pets were reset, never a page that skips the new pets. On memory,
 * SQLite, PostgreSQL and MySQL (PETSTORE_TEST_POSTGRES_URL, PETSTORE_TEST_MYSQL_URL; under CI
 * they must be set), and under `--workers 2` on SQLite: issued by one worker, reset by another,
 * refused by both. A namespace's cursors are its own: the default store's reset leaves them.
 *
 * Run: node --import tsx --test test/stale-cursor.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { inFreshMysqlDatabase, inFreshSchema } from './helpers/load.js'
import { killAll, type RunningServer, readyPids, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'cursor-key'
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
/** Skipped without the server, but never under CI. */
const unless = (url: string | undefined, name: string) => !url && !process.env.CI && `${name} not set`

const dir = mkdtempSync(join(tmpdir(), 'petstore-cursor-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** Ids 1 to 5; a reset puts them back, and the next create gets 6. */
const seedFile = join(dir, 'seed.json')
writeFileSync(
  seedFile,
  JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ id: i + 1, name: `Seed ${i + 1}`, categoryId: 1 }))),
)

const start = (db: string, extra: string[] = []) =>
  startServer(['--port', '0', '--key', KEY, '--log', 'off', '--db', db, '--seed', seedFile, '--test-control', ...extra])

/** Fresh connections: under `--workers` the primary hands them to the workers in turn. */
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', connection: 'close' }

async function page(server: RunningServer, path: string) {
  const answer = await fetch(`${server.origin}${path}`, { headers })
  const body = (await answer.json()) as unknown
  const next = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1]
  return { status: answer.status, body, next }
}

async function createPets(server: RunningServer, count: number) {
  for (let i = 0; i < count; i++) {
    const answer = await fetch(`${server.url}/pets`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: `New ${i}`, categoryId: 2 }),
    })
    assert.equal(answer.status, 201)
  }
}

const reset = async (server: RunningServer, prefix = '') =>
  assert.equal((await fetch(`${server.origin}${prefix}/__petstore/reset`, { method: 'POST', headers })).status, 204)

/** The 400 of a cursor from before a reset. */
function assertStale(answer: { status: number; body: unknown }) {
  assert.equal(answer.status, 400, JSON.stringify(answer.body))
  const body = answer.body as { code: string; message: string; details: Array<{ path: string; message: string }> }
  assert.equal(body.code, 'validation_error')
  assert.match(body.message, /^cursor: .*reset since (this|the) cursor was issued/)
  assert.equal(body.details[0]?.path, 'cursor')
}

/** A walk begun, the pets reset and more created: its next page is refused; a walk begun after runs whole. */
async function staleAfterReset(server: RunningServer, tries = 1) {
  await createPets(server, 3)
  const first = await page(server, '/v1/pets?limit=4')
  assert.equal(first.status, 200)
  assert.ok(first.next, 'a next link')
  await reset(server)
  // New pets 6, 7 and 8 after the seed: a cursor after id 4 would resume at 5 and never say so,
  // and one after a higher id would skip them all.
  await createPets(server, 3)
  for (let i = 0; i < tries; i++) assertStale(await page(server, first.next))
  const walked: number[] = []
  for (let next: string | undefined = '/v1/pets?limit=4'; next !== undefined; ) {
    const answer = await page(server, next)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    walked.push(...(answer.body as Array<{ id: number }>).map((pet) => pet.id))
    next = answer.next
  }
  assert.deepEqual(walked, [1, 2, 3, 4, 5, 6, 7, 8])
}

async function onBinary(db: string, extra: string[] = []) {
  const server = await start(db, extra)
  try {
    await staleAfterReset(server)
  } finally {
    await server.stop()
  }
}

describe('a cursor from before a reset is refused', () => {
  test('memory', () => onBinary('memory'))
  test('SQLite', () => onBinary(`sqlite:${join(dir, 'pets.db')}`))
  test('PostgreSQL', { skip: unless(POSTGRES_URL, 'PETSTORE_TEST_POSTGRES_URL') }, () =>
    inFreshSchema(POSTGRES_URL ?? '', 'hard_cursor', (url) => onBinary(url)),
  )
  test('MySQL', { skip: unless(MYSQL_URL, 'PETSTORE_TEST_MYSQL_URL') }, () =>
    inFreshMysqlDatabase(MYSQL_URL ?? '', 'hard_cursor', (url) => onBinary(url)),
  )

  test('--workers 2 on SQLite: issued by one worker, reset by another, refused by both', {
    timeout: 60_000,
  }, async () => {
    const server = await start(`sqlite:${join(dir, 'workers.db')}`, ['--workers', '2'])
    try {
      await until(() => readyPids(server.stderr()).length === 2, 'two workers ready', 40_000)
      // Each step on a fresh connection, so the cursor, the reset and the refusals go to both workers.
      await staleAfterReset(server, 6)
    } finally {
      await server.stop()
    }
  })

  test("a namespace's cursor outlives the default store's reset, not its own", async () => {
    const server = await start(`sqlite:${join(dir, 'namespaces.db')}`)
    try {
      const first = await page(server, '/ns/a/v1/pets?limit=2')
      assert.ok(first.next)
      await reset(server)
      assert.equal((await page(server, first.next)).status, 200)
      await reset(server, '/ns/a')
      assertStale(await page(server, first.next))
    } finally {
      await server.stop()
    }
  })
})
