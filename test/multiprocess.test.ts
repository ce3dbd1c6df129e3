/**
 * Several `petstore-server` processes, one database. Binaries started at the
 * same moment on a database without tables (so their migrations race) must
 * all come up; then three of them take thousands of concurrent creates each,
 * and every acknowledged pet must be visible, identically, from every process,
 * with no id repeated.
 *
 * SQLite always runs (a fresh temp file). PostgreSQL and MariaDB/MySQL run
 * when `PETSTORE_TEST_POSTGRES_URL` / `PETSTORE_TEST_MYSQL_URL` are set, e.g.
 * postgres://postgres@127.0.0.1:5432/test and mysql://root@127.0.0.1:3306/test.
 * The binary uses the default table names there, so this test drops
 * `petstore_pets`, `petstore_migration` and `petstore_migration_lock` in that
 * database (Postgres: in its current schema) before and after: point it at a
 * database kept for tests.
 *
 * Run: node --import tsx --test test/multiprocess.test.ts
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, type TestContext, test } from 'node:test'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { createdTables } from '../src/store/sql/store-options.js'
import { createMany, listAll, mismatchesById, nthPet, type Pet } from './helpers/load.js'
import { killAll, type RunningServer, startServer } from './helpers/spawn-server.js'

const PROCESSES = 3
const CREATES_PER_PROCESS = 2000
/** Requests in flight per process: enough to keep every writer contending, few enough for 2 cores. */
const IN_FLIGHT = 48
const PAGE = 100
/** Processes of the migration race case. */
const RACERS = 6
const KEY = 'multiprocess-key'
const HEADERS = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
/** The binary's default tables (it has no flag to rename them). */
const TABLES = createdTables('petstore_pets', 'petstore_migration')

/** A database the processes share. */
interface Target {
  /** The `--db` value. */
  db: string
  /** Leaves the database without the store's tables; asserts that it is so. */
  reset(): Promise<void>
  /** Removes whatever the run left. */
  cleanup(): Promise<void>
}

const tempDirs: string[] = []

after(async () => {
  await killAll()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

function sqliteTarget(): Target {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-multiprocess-'))
  tempDirs.push(dir)
  const path = join(dir, 'pets.db')
  return {
    db: `sqlite:${path}`,
    // No file at all: the first process to open it creates it, and they all race to migrate it.
    reset: async () => assert.equal(existsSync(path), false),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

function postgresTarget(url: string): Target {
  const withClient = async (work: (client: pg.Client) => Promise<void>) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await work(client)
    } finally {
      await client.end()
    }
  }
  const drop = (client: pg.Client) => client.query(`drop table if exists ${TABLES.join(', ')}`).then(() => undefined)
  return {
    db: url,
    reset: () =>
      withClient(async (client) => {
        await drop(client)
        // Only the current schema: other tests put tables of these names in schemas of their own.
        const { rows } = await client.query(
          'select tablename from pg_tables where schemaname = current_schema() and tablename = any($1)',
          [TABLES],
        )
        assert.deepEqual(rows, [], 'no store tables before the processes start')
      }),
    cleanup: () => withClient(drop),
  }
}

function mysqlTarget(url: string): Target {
  const withConnection = async (work: (connection: mysql.Connection) => Promise<void>) => {
    const connection = await mysql.createConnection(url)
    try {
      await work(connection)
    } finally {
      await connection.end()
    }
  }
  const drop = (connection: mysql.Connection) =>
    connection.query(`drop table if exists ${TABLES.join(', ')}`).then(() => undefined)
  return {
    db: url,
    reset: () =>
      withConnection(async (connection) => {
        await drop(connection)
        const [rows] = await connection.query(
          'select table_name from information_schema.tables where table_schema = database() and table_name in (?)',
          [TABLES],
        )
        assert.deepEqual(rows, [], 'no store tables before the processes start')
      }),
    cleanup: () => withConnection(drop),
  }
}

/** `GET url` with the key: its status and text. */
async function fetchText(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers: HEADERS })
  return { status: res.status, text: await res.text() }
}

/** `failures` grouped by status (or error), with one example each: the numbers to act on. */
function tally(failures: string[]): string {
  const groups = new Map<string, { count: number; example: string }>()
  for (const failure of failures) {
    const key = failure.split(' ', 1)[0] ?? ''
    const group = groups.get(key) ?? { count: 0, example: failure.slice(0, 300) }
    group.count++
    groups.set(key, group)
  }
  return [...groups].map(([key, { count, example }]) => `${count} × ${key} (e.g. ${example})`).join('; ')
}

/**
 * Spawns `count` binaries on `db` in one tick, so that they open it and migrate it together, and
 * resolves once all are ready. If any fails to start, the others are stopped and the error says
 * how many failed and why (`startServer` includes their stderr).
 */
async function startAll(db: string, count: number): Promise<RunningServer[]> {
  const settled = await Promise.allSettled(
    Array.from({ length: count }, () => startServer(['--port', '0', '--key', KEY, '--db', db])),
  )
  const servers = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  const errors = settled.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []))
  if (errors.length === 0) return servers
  await Promise.all(servers.map((server) => server.stop('SIGKILL')))
  throw new Error(`${errors.length} of ${count} processes started together failed:\n${errors.join('\n')}`)
}

async function stopAll(servers: RunningServer[]): Promise<void> {
  const exits = await Promise.all(servers.map((server) => server.stop('SIGTERM')))
  for (const [index, exit] of exits.entries()) {
    assert.deepEqual(
      exit,
      { code: 0, signal: null },
      `process ${index} exits 0 on SIGTERM: ${servers[index]!.stderr()}`,
    )
  }
}

/** The load test: {@link PROCESSES} processes, {@link CREATES_PER_PROCESS} creates through each, then every check. */
async function run(t: TestContext, target: Target): Promise<void> {
  const started = performance.now()
  await target.reset()
  let servers: RunningServer[] = []
  try {
    servers = await startAll(target.db, PROCESSES)
    const ready = performance.now()

    const loads = await Promise.all(
      servers.map((server, index) =>
        createMany(server.url, KEY, {
          count: CREATES_PER_PROCESS,
          inFlight: IN_FLIGHT,
          petOf: (i) => nthPet(`p${index}-${i}`, index * CREATES_PER_PROCESS + i),
        }),
      ),
    )
    const loaded = performance.now()
    const created = loads.flatMap((load) => load.created)
    const failures = loads.flatMap((load) => load.failures)
    const total = PROCESSES * CREATES_PER_PROCESS
    t.diagnostic(
      `${PROCESSES} processes ready in ${Math.round(ready - started)} ms; ` +
        `${created.length}/${total} creates acknowledged in ${Math.round(loaded - ready)} ms ` +
        `(${Math.round(created.length / ((loaded - ready) / 1000))}/s overall; per process: ` +
        `${loads.map((load) => `${Math.round(load.created.length / (load.ms / 1000))}/s`).join(', ')})` +
        (failures.length > 0 ? `; failures: ${tally(failures)}` : ''),
    )

    const ids = created.map((pet) => pet.id)
    assert.equal(new Set(ids).size, ids.length, 'every acknowledged pet has an id of its own')
    const expected = created.toSorted((a, b) => a.id - b.id)

    // Each process lists exactly the acknowledged pets: in ascending id order, each once, none missing, none extra.
    for (const [index, server] of servers.entries()) {
      const listed = await listAll(server.url, KEY, PAGE)
      for (let i = 1; i < listed.length; i++) {
        assert.ok(listed[i - 1]!.id < listed[i]!.id, `process ${index} lists ids in ascending order, each once`)
      }
      assert.deepEqual(listed, expected, `process ${index} lists exactly the ${expected.length} acknowledged pets`)
    }

    // And by id: each pet from the next process over, so every read crosses processes. (All ids from
    // every process would triple the slowest part of the test and add nothing that listing has not shown.)
    const wrong = await Promise.all(
      loads.map((load, index) => {
        const reader = servers[(index + 1) % PROCESSES]!
        return mismatchesById(load.created, (pet) => fetchText(`${reader.url}/pets/${pet.id}`), IN_FLIGHT)
      }),
    )
    for (const [index, list] of wrong.entries()) {
      const reader = (index + 1) % PROCESSES
      assert.deepEqual(
        list.slice(0, 10),
        [],
        `process ${reader}: ${list.length} pets of process ${index} not as created`,
      )
    }
    const verified = performance.now()

    // Last, so that the checks above report what the acknowledged pets look like even when some creates failed.
    assert.deepEqual(failures, [], `${failures.length} of ${total} creates were not 201: ${tally(failures)}`)

    await stopAll(servers)
    t.diagnostic(
      `verified ${expected.length} pets, listed by each process and read by id from another, in ${Math.round(verified - loaded)} ms; ` +
        `whole case ${Math.round(performance.now() - started)} ms`,
    )
  } finally {
    await Promise.all(servers.map((server) => server.stop('SIGKILL').catch(() => undefined)))
    await target.cleanup()
  }
}

/**
 * The migration race alone, with more processes than the load test: the more start together,
 * the likelier two of them overlap in migrating (on 2 cores, three rarely do).
 */
async function race(t: TestContext, target: Target): Promise<void> {
  const started = performance.now()
  await target.reset()
  let servers: RunningServer[] = []
  try {
    servers = await startAll(target.db, RACERS)
    const ready = performance.now()
    // One schema, usable from every process: a create through each, all of them listed by each.
    const created: Pet[] = []
    for (const [index, server] of servers.entries()) {
      const res = await fetch(`${server.url}/pets`, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({ name: `racer-${index}`, categoryId: index }),
      })
      const text = await res.text()
      assert.equal(res.status, 201, `create through process ${index}: ${text}`)
      created.push(JSON.parse(text) as Pet)
    }
    for (const [index, server] of servers.entries()) {
      assert.deepEqual(await listAll(server.url, KEY, PAGE), created, `process ${index} lists the ${RACERS} pets`)
    }
    await stopAll(servers)
    t.diagnostic(`${RACERS} processes ready in ${Math.round(ready - started)} ms on a database without tables`)
  } finally {
    await Promise.all(servers.map((server) => server.stop('SIGKILL').catch(() => undefined)))
    await target.cleanup()
  }
}

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL

// One case at a time: the server cases share the default table names, and each case wants both cores.
describe('several processes, one database', { concurrency: 1 }, () => {
  const targets = [
    { name: 'SQLite file', target: sqliteTarget, skip: false as const },
    {
      name: 'PostgreSQL',
      target: () => postgresTarget(POSTGRES_URL!),
      skip: POSTGRES_URL ? (false as const) : 'PETSTORE_TEST_POSTGRES_URL is not set',
    },
    {
      name: 'MariaDB/MySQL',
      target: () => mysqlTarget(MYSQL_URL!),
      skip: MYSQL_URL ? (false as const) : 'PETSTORE_TEST_MYSQL_URL is not set',
    },
  ]
  for (const { name, target, skip } of targets) {
    test(
      `${name}: ${RACERS} processes started together on it without tables all migrate and serve`,
      { skip, timeout: 60_000 },
      (t) => race(t, target()),
    )
    test(
      `${name}: ${PROCESSES} processes × ${CREATES_PER_PROCESS} concurrent creates, every pet visible from every process`,
      { skip, timeout: 120_000 },
      (t) => run(t, target()),
    )
  }
})
