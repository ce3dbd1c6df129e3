/**
 * Crash safety: the binary takes concurrent creates from two clients, is
 * SIGKILLed mid-load, and is restarted on the same database. Every pet whose
 * 201 reached a client must be there with the fields it was answered with;
 * pets whose answer was lost may be there too, but only as they were sent;
 * and ids go on after the highest one, none reused.
 *
 * SQLite always runs (a fresh temp file). PostgreSQL runs when
 * `PETSTORE_TEST_POSTGRES_URL` is set, in a schema of its own
 * (`?schema=…`), dropped afterwards; MySQL / MariaDB when
 * `PETSTORE_TEST_MYSQL_URL` is set, in a database of its own, dropped afterwards.
 *
 * Run: node --import tsx --test test/crash.test.ts
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { inFreshMysqlDatabase, inFreshSchema, listAll, mismatchesById } from './helpers/load.js'
import { request } from './helpers/raw-http.js'
import { killAll, type RunningServer, startServer } from './helpers/spawn-server.js'

const KEY = 'crash-key'
const AUTH = { authorization: `Bearer ${KEY}` }
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' }
const CLIENTS = 2
/** Creates in flight per client: enough that many are in flight when the process dies. */
const WORKERS = 16
/** How long the load runs before SIGKILL. */
const LOAD_MS = 1_000
const STATUSES = ['available', 'pending', 'sold', undefined] as const

interface NewPet {
  name: string
  categoryId: number
  status?: string
}
interface Pet extends NewPet {
  id: number
}

const tempDirs: string[] = []

after(async () => {
  await killAll()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** The pet a create sends: its name is unique, its fields vary (a big categoryId, no status, non-ASCII). */
function newPet(client: number, index: number): NewPet {
  const status = STATUSES[index % STATUSES.length]
  const pet: NewPet = { name: `c${client}-${index} «ü» 🐾`, categoryId: index % 2 ? 2 ** 53 - 1 - index : -index }
  if (status) pet.status = status
  return pet
}

/** What the load came to: acknowledged pets, the pets sent, and the requests that got no answer. */
interface Load {
  acknowledged: Pet[]
  sent: Map<string, NewPet>
  /** Requests that got no answer: in flight when the process died (or refused just after). */
  unanswered: number
  /** Answers other than 201: there should be none. */
  rejected: string[]
}

/** Runs {@link CLIENTS} clients × {@link WORKERS} concurrent creates against `server`, SIGKILLs it after {@link LOAD_MS}. */
async function loadThenKill(server: RunningServer): Promise<Load> {
  const load: Load = { acknowledged: [], sent: new Map(), unanswered: 0, rejected: [] }
  let killed = false
  const clients = Array.from({ length: CLIENTS }, () => new http.Agent({ keepAlive: true, maxSockets: WORKERS }))
  let next = 0
  // Each client sends until a request fails after the kill: the load goes on to the moment the
  // process dies (a fast server may have answered all it had received when the signal lands).
  const worker = async (client: number) => {
    for (;;) {
      const pet = newPet(client, next++)
      load.sent.set(pet.name, pet)
      try {
        const answer = await request(clients[client]!, server.port, {
          method: 'POST',
          path: '/v1/pets',
          headers: JSON_HEADERS,
          body: JSON.stringify(pet),
        })
        if (answer.status === 201) load.acknowledged.push(JSON.parse(answer.text) as Pet)
        else load.rejected.push(`${answer.status} ${answer.text}`)
      } catch {
        load.unanswered++
        if (killed) return
      }
    }
  }
  const workers = clients.flatMap((_, client) => Array.from({ length: WORKERS }, () => worker(client)))
  await sleep(LOAD_MS)
  killed = true
  server.child.kill('SIGKILL')
  await Promise.all(workers)
  for (const client of clients) client.destroy()
  return load
}

async function crashAndRestart(t: TestContext, db: string, afterKill: () => string = () => ''): Promise<void> {
  const args = ['--port', '0', '--key', KEY, '--db', db]
  const first = await startServer(args)
  let second: RunningServer | undefined
  try {
    const exited = new Promise((resolve) => first.child.once('exit', (_, signal) => resolve(signal)))
    const load = await loadThenKill(first)
    assert.equal(await exited, 'SIGKILL')
    const { acknowledged } = load
    assert.deepEqual(load.rejected, [], 'every answer before the kill was a 201')
    assert.ok(acknowledged.length > 0, 'creates were acknowledged before the kill')
    assert.ok(load.unanswered > 0, 'creates were still being sent when the process died')
    const ids = acknowledged.map((pet) => pet.id)
    assert.equal(new Set(ids).size, ids.length, 'acknowledged ids are distinct')
    const note = afterKill()

    second = await startServer(args)
    const listed = await listAll(second.url, KEY, 100)
    for (let i = 1; i < listed.length; i++) {
      assert.ok(listed[i - 1]!.id < listed[i]!.id, 'listed in ascending id order, each once')
    }
    // Every acknowledged pet, exactly as answered; anything else only as it was sent.
    const byId = new Map(listed.map((pet) => [pet.id, pet]))
    const missing = acknowledged.filter((pet) => JSON.stringify(byId.get(pet.id)) !== JSON.stringify(pet))
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged pets not listed as created`)
    const acknowledgedIds = new Set(ids)
    const extra = listed.filter((pet) => !acknowledgedIds.has(pet.id))
    for (const pet of extra) {
      const { id, ...fields } = pet
      assert.deepEqual(fields, load.sent.get(pet.name), `pet ${id}, never acknowledged, is one that was sent`)
    }
    const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS })
    const read = (pet: Pet) => request(agent, second!.port, { path: `/v1/pets/${pet.id}`, headers: AUTH })
    const wrong = await mismatchesById(acknowledged, read, WORKERS).finally(() => agent.destroy())
    assert.deepEqual(wrong.slice(0, 5), [], 'each acknowledged pet by id')

    // Ids go on after the highest one acknowledged or stored: none reused.
    const highest = Math.max(0, ...ids, ...listed.map((pet) => pet.id))
    const fresh: Pet[] = []
    for (let i = 0; i < 20; i++) {
      const answer = await request(false, second.port, {
        method: 'POST',
        path: '/v1/pets',
        headers: JSON_HEADERS,
        body: JSON.stringify({ name: `after-restart-${i}`, categoryId: i }),
      })
      assert.equal(answer.status, 201, answer.text)
      fresh.push(JSON.parse(answer.text) as Pet)
    }
    for (const pet of fresh) assert.ok(pet.id > highest, `new id ${pet.id} after the highest before, ${highest}`)
    assert.equal(new Set(fresh.map((pet) => pet.id)).size, fresh.length)

    t.diagnostic(
      `${acknowledged.length} creates acknowledged in ${LOAD_MS} ms, ${load.unanswered} unanswered at SIGKILL` +
        `${note}; after restart ${listed.length} listed (${extra.length} committed without their 201 arriving), ` +
        `all acknowledged present by id and in the list; ids after restart from ${fresh[0]?.id} (highest before ${highest})`,
    )
    assert.deepEqual(await second.stop(), { code: 0, signal: null })
  } finally {
    await first.stop('SIGKILL')
    await second?.stop('SIGKILL')
  }
}

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL

describe('crash safety: SIGKILL mid-load, restart on the same database', { concurrency: true, timeout: 60_000 }, () => {
  test('SQLite file', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-crash-'))
    tempDirs.push(dir)
    const file = join(dir, 'pets.db')
    // After a kill the write-ahead log is still there, unmerged: the restart must recover from it.
    const wal = () =>
      existsSync(`${file}-wal`) ? `, a ${Math.round(statSync(`${file}-wal`).size / 1024)} KiB WAL left` : ''
    await crashAndRestart(t, `sqlite:${file}`, wal)
  })

  test('PostgreSQL', { skip: POSTGRES_URL ? false : 'PETSTORE_TEST_POSTGRES_URL is not set' }, async (t) => {
    await inFreshSchema(POSTGRES_URL!, 'petstore_crash', (url) => crashAndRestart(t, url))
  })

  test('MySQL / MariaDB', { skip: MYSQL_URL ? false : 'PETSTORE_TEST_MYSQL_URL is not set' }, async (t) => {
    await inFreshMysqlDatabase(MYSQL_URL!, 'petstore_crash', (url) => crashAndRestart(t, url))
  })
})
