/**
 * Test control over HTTP, on the binary: `--seed` on every store, `POST
 * /__petstore/reset` (a key needed; under `--workers 2` too), the faults a
 * request asks for with `Prefer` (logged, counted), and `--faults` replayed
 * with `--fault-seed`. Then the library's `seed()`, `reset()` and `withFaults()`.
 *
 * PostgreSQL and MySQL run when PETSTORE_TEST_POSTGRES_URL and
 * PETSTORE_TEST_MYSQL_URL are set (under CI they must be).
 *
 * Run: node --import tsx --test test/test-control.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { seed, withFaults } from '../src/testing.js'
import { inFreshMysqlDatabase, inFreshSchema } from './helpers/load.js'
import { killAll, metricsUrl, type RunningServer, readyPids, runToExit, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'control-key'
const AUTH = { authorization: `Bearer ${KEY}` }
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
/** Skipped without the server, but never under CI. */
const unless = (url: string | undefined, name: string) => !url && !process.env.CI && `${name} not set`

const dir = mkdtempSync(join(tmpdir(), 'petstore-control-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

const SEED = [
  { id: 10, name: 'Rex', categoryId: 1, status: 'available' },
  { name: 'Tom', categoryId: 2 },
]
const seedFile = join(dir, 'seed.json')
writeFileSync(seedFile, JSON.stringify(SEED))

const call = (server: RunningServer, path: string, init: RequestInit = {}) =>
  fetch(`${server.origin}${path}`, { ...init, headers: { ...AUTH, ...(init.headers as Record<string, string>) } })
const ids = async (server: RunningServer) =>
  ((await (await call(server, '/v1/pets?limit=100')).json()) as { id: number }[]).map((pet) => pet.id)
const create = (server: RunningServer, headers: Record<string, string> = {}) =>
  call(server, '/v1/pets', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ name: 'New', categoryId: 3 }),
  })

/** Seeded, changed, reset: the seed and its ids back, every time. */
async function seedAndReset(db: string, extra: string[] = []) {
  const server = await startServer([
    '--port',
    '0',
    '--key',
    KEY,
    '--db',
    db,
    '--seed',
    seedFile,
    '--test-control',
    ...extra,
  ])
  try {
    assert.deepEqual(await ids(server), [10, 11])
    // after-commit: the create is answered 503, and is there.
    const lost = await create(server, { prefer: 'fault=after-commit' })
    assert.equal(lost.status, 503)
    assert.equal(lost.headers.get('petstore-fault'), 'after-commit')
    assert.deepEqual(await ids(server), [10, 11, 12])
    assert.equal(((await (await create(server)).json()) as { id: number }).id, 13)
    const refused = await fetch(`${server.origin}/__petstore/reset`, { method: 'POST' })
    assert.equal(refused.status, 401)
    assert.equal((await call(server, '/__petstore/reset', { method: 'POST' })).status, 204)
    assert.deepEqual(await ids(server), [10, 11])
    assert.equal(((await (await create(server)).json()) as { id: number }).id, 12)
  } finally {
    await server.stop()
  }
  // A store with pets is left as it is, and says so.
  const again = await startServer(['--port', '0', '--key', KEY, '--db', db, '--seed', seedFile, ...extra])
  try {
    assert.deepEqual(await ids(again), [10, 11, 12])
    assert.match(again.stderr(), /--seed .*seed\.json: the store holds pets already, left as it is\n/)
  } finally {
    await again.stop()
  }
}

describe('--seed and POST /__petstore/reset', () => {
  test('memory', async () => {
    const server = await startServer([
      '--port',
      '0',
      '--key',
      KEY,
      '--db',
      'memory',
      '--seed',
      seedFile,
      '--test-control',
    ])
    try {
      assert.deepEqual(await ids(server), [10, 11])
      await create(server)
      assert.equal((await call(server, '/__petstore/reset', { method: 'POST' })).status, 204)
      assert.deepEqual(await ids(server), [10, 11])
      assert.equal(((await (await create(server)).json()) as { id: number }).id, 12)
    } finally {
      await server.stop()
    }
  })
  test('SQLite', () => seedAndReset(`sqlite:${join(dir, 'seeded.db')}`))
  test('PostgreSQL', { skip: unless(POSTGRES_URL, 'PETSTORE_TEST_POSTGRES_URL') }, () =>
    inFreshSchema(POSTGRES_URL ?? '', 'control', (url) => seedAndReset(url)),
  )
  test('MySQL', { skip: unless(MYSQL_URL, 'PETSTORE_TEST_MYSQL_URL') }, () =>
    inFreshMysqlDatabase(MYSQL_URL ?? '', 'control', (url) => seedAndReset(url)),
  )

  test('every worker of --workers 2 sees the reset', async () => {
    const db = `sqlite:${join(dir, 'workers.db')}`
    const server = await startServer([
      ...['--port', '0', '--key', KEY, '--db', db, '--seed', seedFile, '--test-control', '--workers', '2'],
    ])
    try {
      for (let i = 0; i < 4; i++) await create(server)
      assert.equal((await call(server, '/__petstore/reset', { method: 'POST' })).status, 204)
      // Fresh connections, spread over both workers by the primary.
      for (let i = 0; i < 6; i++) {
        assert.deepEqual(await ids(server), [10, 11])
      }
      assert.equal(((await (await create(server, { connection: 'close' })).json()) as { id: number }).id, 12)
    } finally {
      await server.stop()
    }
  })

  test('--workers 2: a replacement worker resets to the seed read at start, whatever the file holds now', {
    timeout: 120_000,
  }, async () => {
    const file = join(dir, 'workers-seed.json')
    writeFileSync(file, JSON.stringify(SEED))
    const db = `sqlite:${join(dir, 'workers-seed.db')}`
    const server = await startServer([
      ...['--port', '0', '--key', KEY, '--db', db, '--seed', file, '--test-control', '--workers', '2'],
    ])
    /** Resets and lists over fresh connections, which the primary hands to both workers in turn. */
    const resetsEverywhere = async () => {
      for (let i = 0; i < 4; i++) {
        const reset = await call(server, '/__petstore/reset', { method: 'POST', headers: { connection: 'close' } })
        assert.equal(reset.status, 204)
        assert.deepEqual(await ids(server), [10, 11], `reset ${i}`)
      }
    }
    try {
      await until(() => readyPids(server.stderr()).length === 2, 'two workers ready', 40_000)
      const [first, healthy] = readyPids(server.stderr()) as [number, number]
      writeFileSync(file, JSON.stringify([{ id: 50, name: 'Changed', categoryId: 9 }]))
      process.kill(first, 'SIGKILL')
      await until(() => readyPids(server.stderr()).length === 3, 'a replacement ready', 40_000)
      await resetsEverywhere()

      rmSync(file)
      const replacement = readyPids(server.stderr())[2] as number
      process.kill(replacement, 'SIGKILL')
      await until(() => readyPids(server.stderr()).length === 4, 'a second replacement ready', 40_000)
      await resetsEverywhere()
      // Signal 0 only asks whether it is there: the healthy worker was never stopped.
      process.kill(healthy, 0)
      assert.doesNotMatch(server.stderr(), /giving up|exited before it was ready/)
    } finally {
      await server.stop()
    }
  })

  test('a bad seed file is one line naming the file, the entry and the field, then exit 1', async () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(
      bad,
      JSON.stringify([
        { name: 'Rex', categoryId: 1 },
        { name: 'Tom', categoryId: 'x' },
      ]),
    )
    const { code, stderr } = await runToExit(['--port', '0', '--key', KEY, '--db', 'memory', '--seed', bad])
    assert.equal(code, 1)
    assert.equal(stderr, `petstore-server: --seed ${bad}: pets[1].categoryId: must be an integer\n`)
  })

  test('a seed whose ids leave no room for new pets is refused, on every store', async () => {
    // Seeded at 2^53 - 1, the stores once answered three creates with one id, or with ids they could not represent.
    const top = join(dir, 'top.json')
    writeFileSync(top, '[{"id":9007199254740991,"name":"a","categoryId":1}]')
    const handedOut = join(dir, 'handed-out.json')
    writeFileSync(handedOut, '[{"id":4503599627370495,"name":"a","categoryId":1},{"name":"b","categoryId":1}]')
    const stores = ['memory', `sqlite:${join(dir, 'top.db')}`, POSTGRES_URL, MYSQL_URL]
    for (const db of stores.filter((db): db is string => db !== undefined)) {
      const refused = await runToExit(['--port', '0', '--key', KEY, '--db', db, '--seed', top])
      assert.equal(refused.code, 1, db)
      assert.equal(
        refused.stderr,
        `petstore-server: --seed ${top}: pets[0].id: 9007199254740991 is past 4503599627370495 (2^52 - 1): a seed must leave room for the ids of new pets\n`,
      )
      const next = await runToExit(['--port', '0', '--key', KEY, '--db', db, '--seed', handedOut])
      assert.match(next.stderr, /pets\[1\]: its id would be past 4503599627370495/, db)
    }
    assert.throws(
      () => memoryStore({ pets: [{ id: 2 ** 52, name: 'a', categoryId: 1 }] }),
      /memoryStore: pets\[0\]\.id: 4503599627370496 is past 4503599627370495/,
    )
    const edge = memoryStore({ pets: [{ id: 2 ** 52 - 2, name: 'a', categoryId: 1 }] })
    const handler = createPetstore({ store: edge, keys: [KEY] })
    const created = await handler(
      new Request('http://x/v1/pets', {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        body: '{"name":"b","categoryId":1}',
      }),
    )
    assert.equal(((await created.json()) as { id: number }).id, 2 ** 52 - 1)
  })
})

describe('faults', () => {
  test('Prefer: each kind, logged and counted; a bad preference is a 400', async () => {
    const server = await startServer([
      ...['--port', '0', '--key', KEY, '--db', 'memory', '--test-control', '--log', 'json'],
      ...['--metrics-port', '0'],
    ])
    try {
      const unavailable = await create(server, { prefer: 'fault=unavailable' })
      assert.equal(unavailable.status, 503)
      assert.equal(unavailable.headers.get('petstore-fault'), 'unavailable')
      assert.deepEqual(await unavailable.json(), {
        code: 'unavailable',
        message: 'The pet store is temporarily unavailable; try again later',
        status: 503,
      })
      assert.deepEqual(await ids(server), [], 'unavailable touches no store')
      const limited = await call(server, '/v1/pets', { headers: { prefer: 'fault=rate-limited' } })
      assert.equal(limited.status, 429)
      assert.equal(limited.headers.get('retry-after'), '1')
      assert.equal(((await limited.json()) as { code: string }).code, 'rate_limited')
      const internal = await call(server, '/v1/pets/1', { headers: { prefer: 'respond-async, fault="internal"' } })
      assert.equal(internal.status, 500)
      assert.equal(internal.headers.get('petstore-fault'), 'internal')
      await assert.rejects(
        call(server, '/v1/pets', { headers: { prefer: 'fault=reset' } }),
        'the connection is dropped',
      )
      const started = performance.now()
      assert.equal((await call(server, '/v1/pets', { headers: { prefer: 'delay=300' } })).status, 200)
      assert.ok(performance.now() - started >= 290, 'delayed')
      const nonsense = await call(server, '/v1/pets', { headers: { prefer: 'delay=1e9' } })
      assert.equal(nonsense.status, 400)
      assert.match(
        ((await nonsense.json()) as { message: string }).message,
        /^Prefer: delay must be whole milliseconds/,
      )
      assert.equal((await call(server, '/v1/pets', { headers: { prefer: 'fault=boom' } })).status, 400)
      // The key comes first: a request without one is a 401 whatever it prefers.
      assert.equal((await fetch(`${server.url}/pets`, { headers: { prefer: 'fault=internal' } })).status, 401)

      const log = server.stdout()
      assert.match(log, /"statusCode":503.*"code":"unavailable","fault":"unavailable"/)
      assert.match(log, /"statusCode":429.*"fault":"rate-limited"/)
      const metrics = await (await fetch(metricsUrl(server) ?? '')).text()
      for (const kind of ['unavailable', 'rate-limited', 'internal', 'reset']) {
        assert.match(metrics, new RegExp(`petstore_faults_total\\{kind="${kind}"\\} 1\\n`))
      }
    } finally {
      await server.stop()
    }
  })

  test('--faults with --fault-seed: the same requests get the same faults; Prefer and reset are off', async () => {
    const args = ['--port', '0', '--key', KEY, '--db', 'memory', '--faults', 'unavailable:0.3,internal:0.2']
    const run = async () => {
      const server = await startServer([...args, '--fault-seed', '7', '--latency', '0-3'])
      try {
        const statuses: number[] = []
        for (let i = 0; i < 40; i++) {
          const answer = await call(server, '/v1/pets', { headers: { prefer: 'fault=rate-limited' } })
          await answer.arrayBuffer()
          statuses.push(answer.status)
        }
        assert.equal((await call(server, '/__petstore/reset', { method: 'POST' })).status, 404)
        return statuses
      } finally {
        await server.stop()
      }
    }
    const [first, second] = await Promise.all([run(), run()])
    assert.deepEqual(first, second)
    assert.deepEqual([...new Set(first)].sort(), [200, 500, 503], 'a mix, and no 429: Prefer is ignored')
    const unseeded = await startServer(args)
    await unseeded.stop()
    assert.match(unseeded.stderr(), /faults drawn with --fault-seed \d+/)
  })
})

describe('in the library', () => {
  test('seed() and reset() on memoryStore; seed() on your own store creates in order', async () => {
    const store = memoryStore()
    assert.equal(
      await seed(store, [
        { id: 5, name: 'Rex', categoryId: 1 },
        { name: 'Tom', categoryId: 2 },
      ]),
      true,
    )
    assert.equal((await store.create({ name: 'New', categoryId: 3 })).id, 7)
    assert.equal(await seed(store, [{ name: 'Ann', categoryId: 1 }]), false, 'a store with pets is left')
    await store.reset()
    assert.deepEqual(
      (await store.list({ limit: 10 })).map((pet) => pet.name),
      ['Ann'],
      'reset puts back the last seed remembered',
    )
    const { create, get, list }: PetStore = memoryStore()
    const own: PetStore = { create, get, list }
    await seed(own, [{ name: 'Rex', categoryId: 1 }])
    assert.equal((await own.list({ limit: 10 })).length, 1)
    await assert.rejects(seed(own, [{ id: 3, name: 'Rex', categoryId: 1 }]), /ids can be kept only/)
    await assert.rejects(seed(store, [{ name: '', categoryId: 1 }]), /^TypeError: seed: pets\[0\]\.name: /)
  })

  test('withFaults: the same seed, the same faults; a handler of another make is refused', async () => {
    const statuses = async () => {
      const handler = withFaults(createPetstore({ store: memoryStore(), keys: [KEY] }), {
        faults: { 'rate-limited': 0.5 },
        seed: 3,
      })
      const seen: number[] = []
      for (let i = 0; i < 20; i++) seen.push((await handler(new Request('http://x/v1/pets', { headers: AUTH }))).status)
      return seen
    }
    const first = await statuses()
    assert.deepEqual(first, await statuses())
    assert.deepEqual([...new Set(first)].sort(), [200, 429])
    assert.throws(() => withFaults(async () => new Response(), { faults: { internal: 1 } }), /createPetstore made/)
    assert.throws(() => withFaults(createPetstore({ store: memoryStore(), keys: [KEY] }), { faults: { internal: 2 } }))
  })
})
