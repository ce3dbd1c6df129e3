/**
 * `Idempotency-Key` on the binary: `--idempotency-ttl` (and PETSTORE_IDEMPOTENCY_TTL) read and
 * obeyed, and retries of one key spread over the processes of `--workers 2` making one pet, on a
 * SQLite file and on PostgreSQL (PETSTORE_TEST_POSTGRES_URL): the keys live in the database.
 *
 * Run: node --import tsx --test test/idempotency-binary.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseCli, UsageError } from '../bin/options.js'
import { inFreshSchema } from './helpers/load.js'
import { request } from './helpers/raw-http.js'
import { killAll, type RunningServer, readyPids, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'idempotency-key-test'
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const dir = mkdtempSync(join(tmpdir(), 'petstore-idempotency-bin-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** A keyed create on a connection of its own, closed after the answer: the next may reach another worker. */
function create(server: RunningServer, key: string, name = 'Rex') {
  return request(false, server.port, {
    method: 'POST',
    path: '/v1/pets',
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      'idempotency-key': key,
      connection: 'close',
    },
    body: JSON.stringify({ name, categoryId: 1 }),
  })
}

async function petCount(server: RunningServer): Promise<number> {
  const answer = await request(false, server.port, {
    path: '/v1/pets?limit=100',
    headers: { authorization: `Bearer ${KEY}`, connection: 'close' },
  })
  return (JSON.parse(answer.text) as unknown[]).length
}

describe('--idempotency-ttl', () => {
  it('takes a duration, from the flag or PETSTORE_IDEMPOTENCY_TTL; the flag wins', () => {
    const ttl = (argv: string[], env: Record<string, string> = {}) => parseCli(argv, env).idempotencyTtlMs
    assert.equal(ttl([]), undefined)
    assert.equal(ttl(['--idempotency-ttl', '90s']), 90_000)
    assert.equal(ttl(['--idempotency-ttl', '500']), 500)
    assert.equal(ttl(['--idempotency-ttl', '1d']), 86_400_000)
    assert.equal(ttl([], { PETSTORE_IDEMPOTENCY_TTL: '2h' }), 7_200_000)
    assert.equal(ttl(['--idempotency-ttl', '30m'], { PETSTORE_IDEMPOTENCY_TTL: '2h' }), 1_800_000)
    for (const bad of ['0', '1 day', '-5s', '367d', '1.5h', 'h']) {
      assert.throws(
        () => ttl([`--idempotency-ttl=${bad}`]),
        (error: Error) => {
          assert.ok(error instanceof UsageError)
          assert.match(
            error.message,
            /^--idempotency-ttl must be a whole number of ms, or one followed by ms, s, m, h or d/,
          )
          return true
        },
      )
    }
  })

  it('the binary keeps a key that long, then creates again', { timeout: 60_000 }, async () => {
    const server = await startServer([
      '--port',
      '0',
      '--db',
      'memory',
      '--key',
      KEY,
      '--log',
      'off',
      '--idempotency-ttl',
      '400ms',
    ])
    try {
      const first = await create(server, 'ttl')
      assert.equal(first.status, 201)
      const replay = await create(server, 'ttl')
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      await sleep(600)
      const again = await create(server, 'ttl')
      assert.equal(again.status, 201)
      assert.equal(again.headers['idempotent-replayed'], undefined)
      assert.equal(await petCount(server), 2)
    } finally {
      await server.stop('SIGKILL')
    }
  })
})

/** Requests each worker answered, by pid, from the lines workers write when they exit. */
const answeredByPid = (stderr: string) =>
  new Map([...stderr.matchAll(/worker \d+ \(pid (\d+)\) answered (\d+) requests/g)].map((m) => [m[1], Number(m[2])]))

/** Retries of one key over fresh connections, one by one and then at once, through two workers: one pet. */
async function onePetThroughTwoWorkers(db: string): Promise<void> {
  const server = await startServer(['--workers', '2', '--port', '0', '--key', KEY, '--db', db, '--log', 'off'])
  try {
    await until(() => readyPids(server.stderr()).length === 2, 'two workers say they are ready', 15_000)
    const answers = []
    for (let i = 0; i < 10; i++) answers.push(await create(server, 'spread'))
    answers.push(...(await Promise.all(Array.from({ length: 20 }, () => create(server, 'spread')))))
    assert.deepEqual(
      new Set(answers.map((answer) => answer.status)),
      new Set([201]),
      answers.map((a) => a.text).join('\n'),
    )
    assert.equal(new Set(answers.map((answer) => answer.text)).size, 1, 'every answer is the one pet')
    assert.equal(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined).length, 1)
    assert.equal(await petCount(server), 1)
    await server.stop('SIGTERM')
    const answered = answeredByPid(server.stderr())
    assert.equal(answered.size, 2, server.stderr())
    for (const [pid, count] of answered) assert.ok(count > 0, `worker ${pid} answered some of the retries`)
  } finally {
    await server.stop('SIGKILL').catch(() => undefined)
  }
}

describe('Idempotency-Key under --workers 2', { concurrency: 1 }, () => {
  it('SQLite file: retries spread over both workers make one pet', { timeout: 60_000 }, () =>
    onePetThroughTwoWorkers(`sqlite:${join(dir, 'pets.db')}`),
  )

  it(
    'PostgreSQL: the same',
    { skip: POSTGRES_URL ? false : 'PETSTORE_TEST_POSTGRES_URL is not set', timeout: 60_000 },
    () => inFreshSchema(POSTGRES_URL!, 'idem_workers', onePetThroughTwoWorkers),
  )
})
