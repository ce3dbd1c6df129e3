/**
 * The binary's metrics beyond request counts: store errors and 503s in
 * `petstore_errors_total`, and a metrics listener that stays on loopback
 * whatever `--host` is. Real processes, a real SQLite file, real sockets.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseCli } from '../bin/options.js'
import { USAGE } from '../bin/usage.js'
import { loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { parsePrometheus, sumOf } from './helpers/prometheus.js'
import { killAll, metricsUrl, type RunningServer, runToExit, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-metrics-'))
after(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

const KEY = 'metrics-key-5d1c'
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

async function create(server: RunningServer, name: string): Promise<number> {
  const answer = await fetch(`${server.origin}/v1/pets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name, categoryId: 1 }),
  })
  await answer.arrayBuffer()
  return answer.status
}

describe('petstore_errors_total', () => {
  it('counts store failures (500 internal_error) and an unreachable store (503 unavailable) by code', async () => {
    const file = join(dir, 'errors.db')
    const server = await startServer(['--port', '0', '--db', `sqlite:${file}`, '--key', KEY, '--metrics-port', '0'])
    // The runtime's own SQLite driver: on Node 22 and 24, better-sqlite3's addon (built for Node 20) cannot load.
    const database = (await loadSqliteDriver()).open(file)
    const outside = { exec: (sql: string) => database.prepare(sql).run([]), close: () => database.close() }
    try {
      await until(() => metricsUrl(server) !== undefined, 'the metrics line')
      assert.equal(await create(server, 'Fine'), 201)
      // A trigger refusing every insert: the store fails in a way no request can fix (500).
      outside.exec(`create trigger refuse before insert on petstore_pets begin select raise(abort, 'refused'); end`)
      assert.equal(await create(server, 'Refused 1'), 500)
      assert.equal(await create(server, 'Refused 2'), 500)
      outside.exec('drop trigger refuse')
      // Another process holding the write lock past the busy timeout (5 s): the store is unavailable (503).
      outside.exec('begin immediate')
      assert.equal(await create(server, 'Locked out'), 503)
      outside.exec('rollback')
      assert.equal(await create(server, 'Fine again'), 201)
      const pets = await fetch(`${server.origin}/v1/pets`, { headers })
      await pets.arrayBuffer()

      const scrape = await fetch(metricsUrl(server) ?? '')
      assert.equal(scrape.status, 200)
      const samples = parsePrometheus(await scrape.text())
      assert.equal(sumOf(samples, 'petstore_errors_total', { code: 'internal_error' }), 2)
      assert.equal(sumOf(samples, 'petstore_errors_total', { code: 'unavailable' }), 1)
      assert.equal(sumOf(samples, 'petstore_errors_total'), 3, 'no other error code')
      const posts = (status: string) =>
        sumOf(samples, 'http_requests_total', { method: 'POST', route: '/v1/pets', status_code: status })
      assert.deepEqual([posts('201'), posts('500'), posts('503')], [2, 2, 1])
      // The histogram saw every request, the 503 among the slow ones (it waited out the busy timeout).
      assert.equal(sumOf(samples, 'http_request_duration_seconds_count'), 6)
      const slow = sumOf(samples, 'http_request_duration_seconds_count', { status_code: '503' })
      const underOneSecond = sumOf(samples, 'http_request_duration_seconds_bucket', { status_code: '503', le: '1' })
      assert.deepEqual([slow, underOneSecond], [1, 0])
      assert.ok(sumOf(samples, 'http_request_duration_seconds_sum') >= 4, 'the 503 waited about 5 s')
      assert.equal(sumOf(samples, 'http_requests_in_flight'), 0)
      // The store's errors went to stderr through onError, never to the metrics as text.
      assert.ok(!samples.some((sample) => Object.values(sample.labels).some((value) => value.includes('refused'))))
    } finally {
      outside.close()
      await server.stop()
    }
  })
})

describe('the metrics listener', () => {
  it('binds 127.0.0.1 whatever --host is, unless --metrics-host says otherwise', async () => {
    assert.equal(parseCli(['--host', '0.0.0.0', '--metrics-port', '9464'], {}).metricsHost, '127.0.0.1')
    assert.equal(parseCli(['--metrics-port', '9464', '--metrics-host', '0.0.0.0'], {}).metricsHost, '0.0.0.0')
    assert.match(USAGE, /--metrics-host HOST/)
    const args = ['--port', '0', '--db', 'memory', '--key', KEY, '--metrics-port', '0', '--log', 'off']
    const published = await startServer([...args, '--host', '0.0.0.0'])
    try {
      await until(() => metricsUrl(published) !== undefined, 'the metrics line')
      const url = new URL(metricsUrl(published) ?? '')
      assert.equal(url.hostname, '127.0.0.1')
      assert.equal((await fetch(url)).status, 200)
      // The API itself is on every address.
      assert.match(published.stdout(), /listening on http:\/\/0\.0\.0\.0:/)
    } finally {
      await published.stop()
    }
    const chosen = await startServer([...args, '--metrics-host', '0.0.0.0'])
    try {
      await until(() => metricsUrl(chosen) !== undefined, 'the metrics line')
      const url = new URL(metricsUrl(chosen) ?? '')
      assert.equal(url.hostname, '0.0.0.0')
      assert.equal((await fetch(`http://127.0.0.1:${url.port}/metrics`)).status, 200)
    } finally {
      await chosen.stop()
    }
  })

  it('refuses --metrics-host without --metrics-port', async () => {
    const { code, stderr } = await runToExit(['--db', 'memory', '--metrics-host', '0.0.0.0'])
    assert.equal(code, 1)
    assert.match(stderr, /--metrics-host needs --metrics-port/)
  })
})
