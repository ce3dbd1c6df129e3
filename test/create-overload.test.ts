/**
 * Group commit's bound on the binary, over HTTP: while the database holds a
 * write back, at most 4,096 creates wait for it, and each one past that is a
 * 503 at once. The waiting ones are stored once the database lets go, the
 * refused ones never are, and the metrics count both as the clients saw them.
 * On a SQLite file (another connection holds the write lock) and on a
 * PostgreSQL server (another connection locks the table).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { skipOrFail } from './helpers/ci.js'
import { parsePrometheus, type Sample, sumOf } from './helpers/prometheus.js'
import { openSocket } from './helpers/raw-http.js'
import { killAll, metricsUrl, type RunningServer, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const KEY = 'overload-key-8e21'
/** Creates that may wait for a write (group-commit.ts's `maxQueued`), as docs/stores.md states it. */
const QUEUE = 4096
/** Creates sent beyond the one being written and the queue: each of them is refused. */
const BEYOND = 100
const CLIENTS = 1 + QUEUE + BEYOND

const dir = mkdtempSync(join(tmpdir(), 'petstore-overload-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** A create sent but for the last byte of its body, on a connection of its own; `finish()` sends that byte. */
interface HeldCreate {
  name: string
  finish(): void
  /** The status of its answer, once the server has answered and closed. */
  status: Promise<number>
  /** Its answer's body. */
  body(): string
  destroy(): void
}

async function holdCreate(port: number, name: string): Promise<HeldCreate> {
  const body = JSON.stringify({ name, categoryId: 7 })
  const head =
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`
  const { socket, received, closed } = await openSocket(port)
  socket.write(head + body.slice(0, -1))
  const status = closed.then(() => {
    const line = /^HTTP\/1\.1 (\d{3}) /.exec(received())
    if (!line) throw new Error(`create ${name}: no answer, got ${JSON.stringify(received().slice(0, 200))}`)
    return Number(line[1])
  })
  status.catch(() => {}) // read by the test; a failure there is its assertion
  return {
    name,
    finish: () => socket.write(body.slice(-1)),
    status,
    body: () => received().slice(received().indexOf('\r\n\r\n') + 4),
    destroy: () => socket.destroy(),
  }
}

async function scrape(server: RunningServer): Promise<Sample[]> {
  const url = metricsUrl(server)
  assert.ok(url, `no metrics line: ${server.stderr()}`)
  return parsePrometheus(await (await fetch(url)).text())
}

/** How a database is held back, and read afterwards. */
interface HeldDatabase {
  /** The `--db` value. */
  db: string
  /** Holds every write back, from another connection. */
  hold(): Promise<void>
  /** Lets the held write go. */
  release(): Promise<void>
  /** The names of the stored pets. */
  names(): Promise<string[]>
  close(): Promise<void>
}

/**
 * Starts the binary on `database`, sends {@link CLIENTS} creates while it holds the first one
 * back, and checks the answers, the rows and the metrics. `whileHeld` runs once every create is
 * sent, before the database lets go.
 */
async function overload(database: HeldDatabase, whileHeld: (refused: () => number) => Promise<void>) {
  const server = await startServer([
    ...['--port', '0', '--db', database.db, '--key', KEY, '--log', 'off'],
    // No cap: the default (1024 connections) keeps a single process under the queue's bound.
    ...['--max-connections', '0', '--metrics-port', '0'],
  ])
  const sockets: HeldCreate[] = []
  try {
    await until(() => metricsUrl(server) !== undefined, 'the metrics line')
    // Every request is in the handler, its body one byte short, before the database is held.
    for (let start = 0; start < CLIENTS; start += 256) {
      const names = Array.from({ length: Math.min(256, CLIENTS - start) }, (_, i) => `overload-${start + i}`)
      sockets.push(...(await Promise.all(names.map((name) => holdCreate(server.port, name)))))
    }
    await until(
      async () => sumOf(await scrape(server), 'http_requests_in_flight') === CLIENTS,
      `${CLIENTS} requests in flight`,
      20_000,
    )
    await database.hold()
    const [first, ...rest] = sockets
    first?.finish()
    await sleep(300) // the first create is being written, and held
    for (const each of rest) each.finish()
    let refused = 0
    const countRefused = (status: number) => {
      if (status === 503) refused++
    }
    for (const each of rest) each.status.then(countRefused, () => {})
    await whileHeld(() => refused)
    await database.release()

    const statuses = await Promise.all(sockets.map((each) => each.status))
    const created = sockets.filter((_, i) => statuses[i] === 201).map((each) => each.name)
    const count = (status: number) => statuses.filter((each) => each === status).length
    assert.equal(created.length + count(503), CLIENTS, `only 201s and 503s: ${[...new Set(statuses)]}`)
    // The first create, the queue, and on SQLite maybe one more: the write that empties the queue
    // takes one row off it before the rest of that turn's requests queue behind it.
    assert.ok(
      created.length === 1 + QUEUE || created.length === 2 + QUEUE,
      `${created.length} creates accepted, ${count(503)} refused`,
    )
    for (const [i, each] of sockets.entries()) {
      if (statuses[i] !== 503) continue
      assert.deepEqual(JSON.parse(each.body()), {
        code: 'unavailable',
        message: 'The pet store is temporarily unavailable; try again later',
        status: 503,
      })
    }
    assert.deepEqual((await database.names()).sort(), created.sort(), 'every 201 is stored, no 503 is')

    const samples = await scrape(server)
    const posts = (status: string) =>
      sumOf(samples, 'http_requests_total', { method: 'POST', route: '/v1/pets', status_code: status })
    assert.deepEqual([posts('201'), posts('503')], [created.length, count(503)])
    assert.equal(sumOf(samples, 'petstore_errors_total', { code: 'unavailable' }), count(503))
    assert.equal(sumOf(samples, 'petstore_errors_total'), count(503), 'no other error')
    assert.equal(sumOf(samples, 'http_requests_in_flight'), 0)

    // The queue is free again.
    const after = await fetch(`${server.origin}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"name":"after","categoryId":1}',
    })
    assert.equal(after.status, 201)
  } finally {
    for (const each of sockets) each.destroy()
    await server.stop().finally(() => database.close())
  }
}

describe('creates past the group-commit queue', { timeout: 120_000 }, () => {
  it('on SQLite: 503 at once past 4,096 waiting, the rest stored, all counted', async () => {
    const file = join(dir, 'overload.db')
    // The runtime's own driver, as sqliteStore picks it: better-sqlite3's addon is Node 20's only.
    const driver = await loadSqliteDriver()
    let opened: ReturnType<typeof driver.open> | undefined
    // Opened once the server has made the file, migrated and in WAL mode.
    const outside = () => {
      opened ??= driver.open(file)
      return opened
    }
    await overload(
      {
        db: `sqlite:${file}`,
        async hold() {
          outside().prepare('begin immediate').run([])
        },
        async release() {
          outside().prepare('rollback').run([])
        },
        async names() {
          const rows = outside().prepare('select name from petstore_pets').all([]) as { name: string }[]
          return rows.map((row) => row.name)
        },
        async close() {
          opened?.close()
        },
      },
      // The server waits on the lock in its busy handler (up to 5 s), and reads nothing meanwhile:
      // every other create arrives in one turn once the lock is gone.
      () => sleep(700),
    )
  })

  it('on PostgreSQL: the same, while the insert waits on a lock', {
    skip: skipOrFail(!POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set'),
  }, async () => {
    const schema = `petstore_overload_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    const url = new URL(POSTGRES_URL ?? '')
    url.searchParams.set('schema', schema)
    await overload(
      {
        db: url.href,
        async hold() {
          await admin.query('begin')
          await admin.query(`lock table ${schema}.petstore_pets in exclusive mode`)
        },
        async release() {
          await admin.query('commit')
        },
        async names() {
          return (await admin.query(`select name from ${schema}.petstore_pets`)).rows.map((row) => row.name)
        },
        async close() {
          await admin.query('rollback') // a failed test's lock, if it is still held
          await admin.query(`drop schema if exists ${schema} cascade`)
          await admin.end()
        },
      },
      // The server stays responsive: it answers each create past the queue before the lock goes.
      (refused) => until(async () => refused() === BEYOND, `${BEYOND} creates refused`),
    )
  })
})
