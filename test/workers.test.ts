/**
 * `petstore-server --workers N`: several processes under node:cluster on one
 * port and one database. Real processes over real HTTP: thousands of
 * concurrent creates through two workers get unique ids, and every pet is
 * then visible through fresh connections (spread over the workers) and in the
 * list; both workers must have answered requests. Also: the memory store is
 * refused, bad values exit 1, a worker that dies is replaced, a primary whose
 * workers cannot start any more gives up, and signals stop everything.
 *
 * Which worker answered is not visible in the API: each worker says on stderr
 * when it is ready (with its pid) and, when it exits, how many requests it
 * answered. The tests read those lines.
 *
 * PostgreSQL runs when `PETSTORE_TEST_POSTGRES_URL` is set, in a schema of its
 * own (`?schema=…`), dropped afterwards.
 *
 * Run: node --import tsx --test test/workers.test.ts
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { finished } from 'node:stream/promises'
import { after, describe, type TestContext, test } from 'node:test'
import { parseCli, UsageError } from '../bin/options.js'
import { createMany, inFreshSchema, listAll, mismatchesById, nthPet } from './helpers/load.js'
import { request } from './helpers/raw-http.js'
import { killAll, type RunningServer, readyPids, runToExit, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'workers-key'
const CREATES = 2000
/** Clients sending at once: each holds a keep-alive connection, which the primary hands to a worker in turn. */
const CLIENTS = 50
const PAGE = 100

const tempDirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-workers-'))
  tempDirs.push(dir)
  return dir
}

after(async () => {
  await killAll()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** Requests each worker answered, by pid, from the lines workers write when they exit. */
const answeredByPid = (stderr: string) =>
  new Map(
    [...stderr.matchAll(/worker \d+ \(pid (\d+)\) answered (\d+) requests/g)].map((m) => [Number(m[1]), Number(m[2])]),
  )

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** 15 s for what the workers say. */
const waitFor = (condition: () => boolean, what: string) => until(condition, what, 15_000)

/** Resolves once the child's stderr has ended: every worker's last line has been read. */
async function stderrRead(child: ChildProcess): Promise<void> {
  if (child.stderr) await finished(child.stderr).catch(() => undefined)
}

/** Stops `server` with `signal` and asserts that it exits 0, with its stderr read to the end. */
async function stopCleanly(server: RunningServer, signal: NodeJS.Signals): Promise<void> {
  const exit = await server.stop(signal)
  await stderrRead(server.child)
  assert.deepEqual(exit, { code: 0, signal: null }, `exit 0 on ${signal}; stderr:\n${server.stderr()}`)
}

/** `GET path` on a connection of its own, closed after the answer: the next request may reach another worker. */
function freshGet(server: RunningServer, path: string, key = KEY) {
  return request(false, server.port, {
    path: new URL(server.url).pathname + path,
    headers: { authorization: `Bearer ${key}`, connection: 'close' },
  })
}

/** Two workers on `db`: the ready line once, concurrent creates, every pet read back and listed, both workers busy. */
async function loadThroughTwoWorkers(t: TestContext, db: string): Promise<void> {
  const started = performance.now()
  // --log off: stdout is checked to hold the ready line alone.
  const server = await startServer(['--workers', '2', '--port', '0', '--key', KEY, '--db', db, '--log', 'off'])
  try {
    assert.match(server.stdout(), /^petstore-server listening on http:\/\/127\.0\.0\.1:\d+\/v1\n$/)
    assert.notEqual(server.port, 0, '--port 0: the workers share one real port')
    await waitFor(() => readyPids(server.stderr()).length === 2, 'two workers say they are ready')
    const pids = readyPids(server.stderr())
    assert.equal(new Set(pids).size, 2, `two distinct workers: ${server.stderr()}`)
    const ready = performance.now()

    const { created, failures } = await createMany(server.url, KEY, {
      count: CREATES,
      inFlight: CLIENTS,
      petOf: (i) => nthPet(`w-${i}`, i),
    })
    const loaded = performance.now()
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${CREATES} creates were not 201`)
    assert.equal(created.length, CREATES)
    assert.equal(new Set(created.map((pet) => pet.id)).size, CREATES, 'every created pet has an id of its own')

    const expected = created.toSorted((a, b) => a.id - b.id)
    const wrong = await mismatchesById(expected, (pet) => freshGet(server, `/pets/${pet.id}`), CLIENTS)
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} pets not read back as created`)
    assert.deepEqual(
      await listAll(server.url, KEY, PAGE),
      expected,
      'the list holds every created pet exactly once, in id order',
    )
    const verified = performance.now()

    await stopCleanly(server, 'SIGTERM')
    assert.equal(server.stdout().split('\n').length, 2, 'one line on stdout, the ready line')
    const answered = answeredByPid(server.stderr())
    assert.deepEqual([...answered.keys()].sort(), [...pids].sort(), `each worker reports at exit: ${server.stderr()}`)
    for (const [pid, count] of answered) assert.ok(count > CREATES / 10, `worker ${pid} answered ${count} requests`)
    for (const pid of pids) assert.equal(alive(pid), false, `worker ${pid} has exited`)
    t.diagnostic(
      `ready in ${Math.round(ready - started)} ms; ${CREATES} creates in ${Math.round(loaded - ready)} ms ` +
        `(${Math.round(CREATES / ((loaded - ready) / 1000))}/s); read back and listed in ${Math.round(verified - loaded)} ms; ` +
        `requests per worker: ${[...answered.values()].join(', ')}`,
    )
  } finally {
    await server.stop('SIGKILL').catch(() => undefined)
  }
}

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL

describe('petstore-server --workers', { concurrency: 1 }, () => {
  test(
    'SQLite file: 2 workers share the port; concurrent creates unique, every pet visible from both',
    {
      timeout: 60_000,
    },
    (t) => loadThroughTwoWorkers(t, `sqlite:${join(tempDir(), 'pets.db')}`),
  )

  test('PostgreSQL: the same', {
    skip: POSTGRES_URL ? false : 'PETSTORE_TEST_POSTGRES_URL is not set',
    timeout: 60_000,
  }, async (t) => {
    await inFreshSchema(POSTGRES_URL!, 'petstore_workers', (url) => loadThroughTwoWorkers(t, url))
  })

  test('a generated key is printed once and accepted by every worker, and so are cursors; a dead worker is replaced; SIGINT stops all', {
    timeout: 60_000,
  }, async () => {
    const server = await startServer([
      '--workers',
      '2',
      '--port',
      '0',
      '--db',
      `sqlite:${join(tempDir(), 'pets.db')}`,
      '--log',
      'off',
    ])
    try {
      const keys = [...server.stderr().matchAll(/this run accepts: (\S+)/g)].map((match) => match[1]!)
      assert.equal(keys.length, 1, `the generated key is printed once: ${server.stderr()}`)
      const key = keys[0]!
      await waitFor(() => readyPids(server.stderr()).length === 2, 'two workers say they are ready')
      const [first, second] = readyPids(server.stderr()) as [number, number]
      // Fresh connections go to the workers in turn: both accept the one key.
      for (let i = 0; i < 4; i++) assert.equal((await freshGet(server, '/pets', key)).status, 200)
      for (let i = 0; i < 2; i++) {
        const created = await request(false, server.port, {
          method: 'POST',
          path: '/v1/pets',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
          body: '{"name":"paged","categoryId":1}',
        })
        assert.equal(created.status, 201)
      }
      // A cursor one worker issued is accepted by every worker: they sign with the primary's one secret.
      const next = /<\/v1([^>]+)>/.exec(String((await freshGet(server, '/pets?limit=1', key)).headers.link))?.[1]
      assert.ok(next, 'a next link')
      const followCursor = async () => {
        for (let i = 0; i < 4; i++) {
          const answer = await freshGet(server, next, key)
          assert.equal(answer.status, 200, answer.text)
        }
      }
      await followCursor()

      process.kill(first, 'SIGKILL')
      await waitFor(() => readyPids(server.stderr()).length === 3, 'a new worker replaces the killed one')
      const replacement = readyPids(server.stderr())[2]!
      assert.ok(![first, second].includes(replacement), 'the replacement is a new process')
      assert.match(
        server.stderr(),
        new RegExp(`pid ${first}\\) died \\(signal SIGKILL\\); starting another in \\d+ ms`),
      )
      for (let i = 0; i < 4; i++) assert.equal((await freshGet(server, '/pets', key)).status, 200)
      // The replacement too.
      await followCursor()
      assert.equal(server.stdout().split('\n').length, 2, 'the replacement prints no second ready line')

      await stopCleanly(server, 'SIGINT')
      for (const pid of [second, replacement]) assert.equal(alive(pid), false, `worker ${pid} has exited`)
    } finally {
      await server.stop('SIGKILL').catch(() => undefined)
    }
  })

  test('workers that keep failing to start (database gone): the primary gives up, exit 1', {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir()
    const server = await startServer([
      '--workers',
      '2',
      '--port',
      '0',
      '--key',
      KEY,
      '--db',
      `sqlite:${join(dir, 'p.db')}`,
    ])
    try {
      await waitFor(() => readyPids(server.stderr()).length === 2, 'two workers say they are ready')
      const pids = readyPids(server.stderr())
      // The running workers keep their open file; a new one cannot open a file in a folder that is gone.
      rmSync(dir, { recursive: true, force: true })
      process.kill(pids[0]!, 'SIGKILL')
      const exit = await new Promise<number | null>((resolve) => server.child.once('exit', resolve))
      await stderrRead(server.child)
      assert.equal(exit, 1, server.stderr())
      assert.match(
        server.stderr(),
        /petstore-server: 5 workers in a row exited before they were ready \(last: exit code 1\); giving up\n/,
      )
      for (const pid of pids) assert.equal(alive(pid), false, `worker ${pid} has exited`)
    } finally {
      await server.stop('SIGKILL').catch(() => undefined)
    }
  })

  test('the memory store is refused with several workers: one line, exit 1', { timeout: 30_000 }, async () => {
    const runs = await Promise.all([
      runToExit(['--workers', '2', '--db', 'memory']),
      runToExit(['--workers', '2', '--db', 'sqlite::memory:']),
      runToExit(['--db', 'memory'], { PETSTORE_WORKERS: 'auto' }),
    ])
    for (const run of runs) {
      assert.equal(run.code, 1, run.stderr)
      assert.equal(run.stdout, '')
      assert.match(
        run.stderr,
        /^petstore-server: --db (memory|sqlite::memory:) cannot be shared by several workers .*\n$/,
      )
    }
  })

  test('a bad --workers or PETSTORE_WORKERS: one line, exit 1', { timeout: 30_000 }, async () => {
    const runs = await Promise.all([
      runToExit(['--workers', 'two', '--db', 'memory']),
      runToExit(['--db', 'memory'], { PETSTORE_WORKERS: '0' }),
    ])
    assert.equal(runs[0]!.code, 1)
    assert.equal(
      runs[0]!.stderr,
      'petstore-server: --workers must be a number of processes from 1 to 256, or auto, got "two" (see --help)\n',
    )
    assert.equal(runs[1]!.code, 1)
    assert.match(runs[1]!.stderr, /^petstore-server: PETSTORE_WORKERS must be .*, got "0" \(see --help\)\n$/)
  })
})

describe('parsing --workers', () => {
  test('a number, auto, the environment; the flag wins; 1 by default', () => {
    assert.equal(parseCli([], {}).workers, 1)
    assert.equal(parseCli(['--workers', '3'], {}).workers, 3)
    assert.equal(parseCli(['--workers', 'auto'], {}).workers, availableParallelism())
    assert.equal(parseCli([], { PETSTORE_WORKERS: '4' }).workers, 4)
    assert.equal(parseCli(['--workers', '2'], { PETSTORE_WORKERS: 'nonsense' }).workers, 2)
    // One worker is the plain single process: the memory store is fine there.
    assert.equal(parseCli(['--workers', '1', '--db', 'memory'], {}).workers, 1)
  })

  test('anything else is a usage error', () => {
    for (const value of ['0', '-1', '1.5', '257', '', ' 2', '2x', '0x2', '1e2', 'AUTO']) {
      assert.throws(() => parseCli([`--workers=${value}`], {}), UsageError, `--workers=${JSON.stringify(value)}`)
    }
  })
})
