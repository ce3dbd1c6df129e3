/**
 * `--metrics-port` under `--workers 2`, when workers stop answering or die:
 * a scrape never waits on them for long, and the counters never go down.
 * A worker is frozen with SIGSTOP (it cannot answer the primary), killed
 * with SIGKILL during a scrape, then replaced. Real processes, real sockets.
 *
 * Run: node --import tsx --test test/cluster-metrics.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parsePrometheus, sumOf } from './helpers/prometheus.js'
import { request } from './helpers/raw-http.js'
import { killAll, metricsUrl, type RunningServer, readyPids, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'cluster-metrics-key'
const REQUESTS = 30
/** The primary waits 2 s for a worker; a scrape past this bound waited on a worker it should not have. */
const SCRAPE_BOUND_MS = 4_500

const dir = mkdtempSync(join(tmpdir(), 'petstore-cluster-metrics-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** One scrape: its status, how long it took, and the requests counted. */
async function scrape(url: string): Promise<{ status: number; ms: number; total: number; text: string }> {
  const started = performance.now()
  const answer = await fetch(url)
  const text = await answer.text()
  const ms = performance.now() - started
  const total = answer.status === 200 ? sumOf(parsePrometheus(text), 'http_requests_total') : Number.NaN
  return { status: answer.status, ms, total, text }
}

test('a frozen or dying worker: scrapes answer 200 within the bound, counters never go down', {
  timeout: 120_000,
}, async () => {
  const server: RunningServer = await startServer([
    '--workers',
    '2',
    '--port',
    '0',
    '--key',
    KEY,
    '--db',
    `sqlite:${join(dir, 'pets.db')}`,
    '--metrics-port',
    '0',
    '--log',
    'off',
  ])
  let victim: number | undefined
  try {
    await until(() => readyPids(server.stderr()).length === 2, 'two workers ready', 40_000)
    const url = metricsUrl(server) ?? ''
    // Fresh connections: the primary hands them to the workers in turn, so both count some.
    for (let i = 0; i < REQUESTS; i++) {
      const answer = await request(false, server.port, {
        path: '/v1/pets',
        headers: { authorization: `Bearer ${KEY}`, connection: 'close' },
      })
      assert.equal(answer.status, 200)
    }
    const first = await scrape(url)
    assert.equal(first.status, 200, first.text)
    assert.equal(first.total, REQUESTS)

    victim = readyPids(server.stderr())[0]
    process.kill(victim!, 'SIGSTOP')
    const frozen = await scrape(url)
    assert.equal(frozen.status, 200, frozen.text)
    assert.ok(frozen.ms < SCRAPE_BOUND_MS, `a frozen worker held the scrape ${Math.round(frozen.ms)} ms`)
    assert.equal(frozen.total, REQUESTS, "the frozen worker's requests, as last known")

    // Killed while a scrape waits on it: the scrape goes on without it.
    const during = scrape(url)
    await sleep(200)
    process.kill(victim!, 'SIGKILL')
    const dying = await during
    assert.equal(dying.status, 200, dying.text)
    assert.ok(dying.ms < SCRAPE_BOUND_MS, `a dying worker held the scrape ${Math.round(dying.ms)} ms`)
    assert.equal(dying.total, REQUESTS, "the dead worker's requests are kept")

    await until(() => readyPids(server.stderr()).length === 3, 'a replacement ready', 40_000)
    const replaced = await scrape(url)
    assert.equal(replaced.status, 200, replaced.text)
    assert.equal(replaced.total, REQUESTS, 'the replacement starts from nothing; the total stays')
    const count = sumOf(parsePrometheus(replaced.text), 'http_request_duration_seconds_count')
    assert.equal(count, REQUESTS, 'the histogram too')
  } finally {
    // A frozen worker left behind would hold the test's pipes open.
    try {
      if (victim !== undefined) process.kill(victim, 'SIGKILL')
    } catch {
      // Already dead, as it should be.
    }
    await server.stop('SIGKILL').catch(() => undefined)
  }
})

test('what workers counted since the last scrape survives their SIGKILL', { timeout: 120_000 }, async () => {
  const server: RunningServer = await startServer([
    ...['--workers', '2', '--port', '0', '--key', KEY, '--db', `sqlite:${join(dir, 'killed.db')}`],
    ...['--metrics-port', '0', '--log', 'off'],
  ])
  try {
    await until(() => readyPids(server.stderr()).length === 2, 'two workers ready', 40_000)
    const url = metricsUrl(server) ?? ''
    const before = await scrape(url)
    assert.equal(before.status, 200, before.text)
    for (let i = 0; i < 100; i++) {
      const answer = await request(false, server.port, {
        path: '/v1/pets',
        headers: { authorization: `Bearer ${KEY}`, connection: 'close' },
      })
      assert.equal(answer.status, 200)
    }
    // A worker reports in the loop turn after it answers: the client may read the last answer first.
    await sleep(200)
    for (const pid of readyPids(server.stderr())) process.kill(pid, 'SIGKILL')
    const killed = await scrape(url)
    assert.equal(killed.status, 200, killed.text)
    assert.equal(killed.total, before.total + 100, 'the dead workers still count their 100 requests')
    await until(() => readyPids(server.stderr()).length === 4, 'two replacements ready', 40_000)
    const replaced = await scrape(url)
    assert.equal(replaced.total, before.total + 100)
    assert.equal(sumOf(parsePrometheus(replaced.text), 'http_request_duration_seconds_count'), before.total + 100)
  } finally {
    await server.stop('SIGKILL').catch(() => undefined)
  }
})
