/**
 * Namespaces on the binary: off without --test-control; 8 test files run at once against one
 * server, each in its own namespace under seeded faults, 10 runs in a row, on memory, SQLite and
 * PostgreSQL (when PETSTORE_TEST_POSTGRES_URL is set; under CI it must be); a namespace's reset
 * seen by both workers of --workers 2; --max-namespaces and its variable.
 *
 * Run: node --import tsx --test test/namespaces-binary.test.ts
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { inFreshSchema } from './helpers/load.js'
import { killAll, type RunningServer, runToExit, startServer } from './helpers/spawn-server.js'

const KEY = 'ns-key'
const AUTH = { authorization: `Bearer ${KEY}` }
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const noPostgres = !POSTGRES_URL && !process.env.CI && 'PETSTORE_TEST_POSTGRES_URL not set'

const dir = mkdtempSync(join(tmpdir(), 'petstore-ns-binary-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})
const seedFile = join(dir, 'seed.json')
writeFileSync(seedFile, JSON.stringify([{ id: 1, name: 'Seed', categoryId: 9 }]))

const start = (db: string, extra: string[] = [], env?: Record<string, string>) =>
  startServer(['--port', '0', '--key', KEY, '--log', 'off', '--db', db, '--seed', seedFile, ...extra], env)

const get = (server: RunningServer, path: string) => fetch(`${server.origin}${path}`, { headers: AUTH })
const post = (server: RunningServer, path: string, body?: unknown) =>
  fetch(`${server.origin}${path}`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json', connection: 'close' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

/**
 * One test file of a client's suite: its namespace is its file name. Each case resets, then
 * creates, gets and lists, retrying what a fault refused; the faults it met are written to OUT.
 * At the end it deletes its namespace, so the next run starts it afresh.
 */
const SUITE_FILE = `
import assert from 'node:assert/strict'
import { appendFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, beforeEach, test } from 'node:test'

const name = basename(fileURLToPath(import.meta.url), '.test.mjs')
const base = process.env.ORIGIN + '/ns/' + name
const auth = { authorization: 'Bearer ' + process.env.KEY }
const met = []

async function call(path, init = {}) {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(base + path, { ...init, headers: { ...auth, ...init.headers } })
    const fault = response.headers.get('petstore-fault')
    met.push(fault ?? response.status)
    if (fault === null || attempt > 50) return response
    await response.arrayBuffer()
  }
}

beforeEach(async () => {
  const response = await fetch(base + '/__petstore/reset', { method: 'POST', headers: auth })
  assert.equal(response.status, 204)
})

after(async () => {
  appendFileSync(join(process.env.OUT, name), met.join(' '))
  await fetch(base + '/__petstore/namespace', { method: 'DELETE', headers: auth })
})

for (let n = 1; n <= 4; n++) {
  test('case ' + n, async () => {
    const created = []
    for (let i = 0; i < 3; i++) {
      const response = await call('/v1/pets', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: name + '-' + n + '-' + i, categoryId: n }),
      })
      assert.equal(response.status, 201)
      created.push(await response.json())
    }
    assert.deepEqual(created.map((pet) => pet.id), [2, 3, 4], 'ids of its own, after the seed')
    const got = await call('/v1/pets/' + created[1].id)
    assert.deepEqual(await got.json(), created[1])
    const listed = await call('/v1/pets?limit=100')
    assert.deepEqual(await listed.json(), [{ id: 1, name: 'Seed', categoryId: 9 }, ...created])
  })
}
`

/** 10 on the system Node; .ci/node-versions asks fewer of Node 22 and 24, which run the same code. */
const RUNS = Number(process.env.PETSTORE_TEST_NAMESPACE_RUNS ?? 10)

/** Runs the suite's 8 files at once against `server`; resolves with what each file met, by name. */
async function runSuite(server: RunningServer, run: number): Promise<Map<string, string>> {
  const files = join(dir, `suite-${server.port}-${run}`)
  const out = join(files, 'out')
  mkdirSync(out, { recursive: true })
  const paths = Array.from({ length: 8 }, (_, n) => join(files, `file-${n + 1}.test.mjs`))
  for (const path of paths) writeFileSync(path, SUITE_FILE)
  const env: NodeJS.ProcessEnv = { ...process.env, ORIGIN: server.origin, KEY, OUT: out }
  delete env.NODE_TEST_CONTEXT
  const child = spawn(process.execPath, ['--test', '--test-concurrency=8', ...paths], { env, stdio: 'pipe' })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  assert.equal(
    code,
    0,
    `run ${run}: the suite failed:\n${output.slice(-4000)}\nserver:\n${server.stderr().slice(-4000)}`,
  )
  return new Map(readdirSync(out).map((name) => [name, readFileSync(join(out, name), 'utf8')]))
}

/** 10 runs of the suite against one server: every case passes, each namespace meets the same faults each run. */
async function tenRuns(db: string): Promise<void> {
  const server = await start(db, [
    '--test-control',
    '--faults',
    'unavailable:0.15,rate-limited:0.1',
    '--fault-seed',
    '7',
  ])
  try {
    const first = await runSuite(server, 1)
    assert.equal(first.size, 8)
    for (const [name, met] of first) assert.match(met, /unavailable/, `${name} met faults: ${met}`)
    assert.equal(new Set(first.values()).size, 8, 'each namespace draws faults of its own')
    for (let run = 2; run <= RUNS; run++) assert.deepEqual(await runSuite(server, run), first, `run ${run}`)
    // The default namespace has faults too: asked until one answer is not one.
    let listed = await get(server, '/v1/pets')
    while (listed.headers.has('petstore-fault')) listed = await get(server, '/v1/pets')
    assert.deepEqual(await listed.json(), [{ id: 1, name: 'Seed', categoryId: 9 }], 'the default namespace untouched')
  } finally {
    await server.stop()
  }
}

describe(`8 test files at once, each in its namespace, ${RUNS} runs`, () => {
  test('memory', () => tenRuns('memory'))
  test('SQLite', () => tenRuns(`sqlite:${join(dir, 'suite.db')}`))
  test('PostgreSQL', { skip: noPostgres }, () =>
    inFreshSchema(POSTGRES_URL as string, 'ns_suite', (url) => tenRuns(url)),
  )
})

/** Under --workers 2, a reset in one namespace is seen by both workers; another namespace is untouched. */
async function resetSeenByBothWorkers(db: string): Promise<void> {
  const server = await start(db, ['--test-control', '--workers', '2'])
  try {
    // Connections closed after each request: the primary hands them to both workers in turn.
    for (let i = 0; i < 10; i++) {
      assert.equal((await post(server, '/ns/left/v1/pets', { name: `l${i}`, categoryId: 1 })).status, 201)
      assert.equal((await post(server, '/ns/right/v1/pets', { name: `r${i}`, categoryId: 1 })).status, 201)
    }
    const count = async (space: string) => {
      const listed = await fetch(`${server.origin}/ns/${space}/v1/pets?limit=100`, {
        headers: { ...AUTH, connection: 'close' },
      })
      return ((await listed.json()) as unknown[]).length
    }
    for (let i = 0; i < 6; i++) assert.equal(await count('left'), 11, 'both workers see every pet')
    assert.equal((await post(server, '/ns/left/__petstore/reset')).status, 204)
    for (let i = 0; i < 10; i++) {
      const listed = await fetch(`${server.origin}/ns/left/v1/pets?limit=100`, {
        headers: { ...AUTH, connection: 'close' },
      })
      assert.deepEqual(await listed.json(), [{ id: 1, name: 'Seed', categoryId: 9 }], `request ${i} after the reset`)
      assert.equal(await count('right'), 11, 'the other namespace is untouched')
    }
    const ids: number[] = []
    for (let i = 0; i < 10; i++) {
      const created = await post(server, '/ns/left/v1/pets', { name: 'after', categoryId: 1 })
      assert.equal(created.status, 201)
      ids.push(((await created.json()) as { id: number }).id)
    }
    assert.deepEqual(ids, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 'ids restart after the reset, one counter for both workers')
  } finally {
    await server.stop()
  }
}

describe('--workers 2: a namespace reset is seen by both workers', () => {
  test('SQLite', () => resetSeenByBothWorkers(`sqlite:${join(dir, 'workers.db')}`))
  test('PostgreSQL', { skip: noPostgres }, () =>
    inFreshSchema(POSTGRES_URL as string, 'ns_workers', (url) => resetSeenByBothWorkers(url)),
  )
})

test('without --test-control, /ns/… is an unknown path', async () => {
  const server = await start('memory')
  try {
    const answer = await get(server, '/ns/a/v1/pets')
    assert.equal(answer.status, 404)
    assert.equal(((await answer.json()) as { code: string }).code, 'not_found')
    assert.equal((await get(server, '/v1/pets')).status, 200)
  } finally {
    await server.stop()
  }
})

test('--max-namespaces, or PETSTORE_MAX_NAMESPACES, bounds them; it needs --test-control', async () => {
  const server = await start('memory', ['--test-control'], { PETSTORE_MAX_NAMESPACES: '1' })
  try {
    assert.equal((await get(server, '/ns/one/v1/pets')).status, 200)
    const full = await get(server, '/ns/two/v1/pets')
    assert.equal(full.status, 507)
    assert.equal(((await full.json()) as { code: string }).code, 'too_many_namespaces')
  } finally {
    await server.stop()
  }
  const refused = await runToExit(['--max-namespaces', '5'])
  assert.equal(refused.code, 1)
  assert.match(refused.stderr, /--max-namespaces needs --test-control/)
  const bad = await runToExit(['--test-control', '--max-namespaces', 'many'])
  assert.match(bad.stderr, /--max-namespaces must be a whole number/)
})

/** The paths a namespace's journal holds, oldest first. */
async function journalPaths(server: RunningServer, prefix: string): Promise<string[]> {
  const answer = await fetch(`${server.origin}${prefix}/__petstore/requests`, {
    headers: { ...AUTH, connection: 'close' },
  })
  assert.equal(answer.status, 200)
  return ((await answer.json()) as { requests: { path: string }[] }).requests.map((entry) => entry.path)
}

/** Each namespace has a journal of its own, which its reset clears and its deletion drops, in every worker. */
async function journalPerNamespace(db: string, workers: string[]): Promise<void> {
  const server = await start(db, ['--test-control', ...workers])
  try {
    for (let i = 0; i < 4; i++) {
      assert.equal((await post(server, '/ns/j1/v1/pets', { name: `a${i}`, categoryId: 1 })).status, 201)
      assert.equal((await post(server, '/ns/j2/v1/pets', { name: `b${i}`, categoryId: 1 })).status, 201)
    }
    assert.equal((await post(server, '/v1/pets', { name: 'd', categoryId: 1 })).status, 201)
    assert.deepEqual(await journalPaths(server, '/ns/j1'), Array(4).fill('/ns/j1/v1/pets'))
    assert.deepEqual(await journalPaths(server, '/ns/j2'), Array(4).fill('/ns/j2/v1/pets'))
    assert.deepEqual(await journalPaths(server, ''), ['/v1/pets'], 'the default journal holds its own requests')
    assert.equal((await post(server, '/ns/j1/__petstore/reset')).status, 204)
    assert.deepEqual(await journalPaths(server, '/ns/j1'), ['/ns/j1/__petstore/reset'], 'its reset clears it')
    assert.equal((await journalPaths(server, '/ns/j2')).length, 4, 'the other namespace keeps its journal')
    const deleted = await fetch(`${server.origin}/ns/j2/__petstore/namespace`, {
      method: 'DELETE',
      headers: { ...AUTH, connection: 'close' },
    })
    assert.equal(deleted.status, 204)
    assert.deepEqual(await journalPaths(server, '/ns/j2'), [], 'a deleted namespace takes its journal with it')
  } finally {
    await server.stop()
  }
}

describe('a journal per namespace', () => {
  test('one process', () => journalPerNamespace('memory', []))
  test('--workers 2 on SQLite', () => journalPerNamespace(`sqlite:${join(dir, 'journal.db')}`, ['--workers', '2']))
})
