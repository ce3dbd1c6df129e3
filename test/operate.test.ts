/**
 * Running the binary in production: the access log on stdout, request ids,
 * and key rotation on SIGHUP under load. Real processes, real sockets.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import { DIGEST_KEY, KEY as FUZZ_KEY, requestCase } from './fuzz/arbitraries.js'
import { toRequest } from './fuzz/property.js'
import { parsePrometheus } from './helpers/prometheus.js'
import { killAll, metricsUrl, type RunningServer, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-operate-'))
after(() => {
  killAll()
  rmSync(dir, { recursive: true, force: true })
})

const KEY = 'operate-key-3f9a'
const auth = (key = KEY) => ({ authorization: `Bearer ${key}` })

/** The lines after the ready line, which must stay the first line and unchanged. */
function logLines(server: RunningServer): string[] {
  const [ready, ...lines] = server.stdout().split('\n')
  assert.match(ready ?? '', /^petstore-server listening on http:\/\/127\.0\.0\.1:\d+\/v1$/)
  return lines.filter((line) => line !== '')
}

describe('access log', () => {
  it('writes one pino-shaped JSON line per request, with the request id, never a key, the cursor cut short', async () => {
    const server = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'json'])
    try {
      const sent: Array<[string, RequestInit, number]> = [
        [
          '/v1/pets',
          {
            method: 'POST',
            headers: { ...auth(), 'content-type': 'application/json', 'x-request-id': 'from-client-1' },
            body: JSON.stringify({ name: KEY, categoryId: 1 }),
          },
          201,
        ],
        ['/v1/pets/1', { headers: auth() }, 200],
        [`/v1/pets?limit=1&cursor=${'c'.repeat(40)}`, { headers: auth() }, 400],
        ['/v1/pets', { headers: { authorization: 'Bearer wrong-token-77' } }, 401],
        ['/healthz', {}, 200],
        // The reference page's answers too (init.js: the page without loading the renderer).
        ['/v1/docs/init.js', { headers: { 'x-request-id': 'docs-1' } }, 200],
        ['/v1/docs/nope', {}, 404],
      ]
      const ids: string[] = []
      for (const [path, init, status] of sent) {
        const answer = await fetch(`${server.origin}${path}`, init)
        await answer.arrayBuffer()
        assert.equal(answer.status, status, path)
        ids.push(answer.headers.get('x-request-id') ?? '')
      }
      await until(() => logLines(server).length === sent.length, 'a line per request')
      const lines = logLines(server).map((line) => JSON.parse(line))
      for (const [index, line] of lines.entries()) {
        const [path, init, status] = sent[index] ?? []
        assert.equal(line.reqId, ids[index])
        assert.equal(line.res.statusCode, status)
        assert.equal(line.req.method, init?.method ?? 'GET')
        assert.equal(line.level, status !== undefined && status >= 400 ? 40 : 30)
        assert.equal(line.pid, server.child.pid)
        assert.equal(typeof line.hostname, 'string')
        assert.equal(typeof line.time, 'number')
        assert.equal(typeof line.responseTime, 'number')
        assert.equal(line.msg, 'request completed')
        if (!path?.includes('cursor')) assert.equal(line.req.url, path)
      }
      assert.equal(lines[0].reqId, 'from-client-1')
      assert.equal(lines[5].reqId, 'docs-1')
      assert.deepEqual(
        lines.map((line) => line.route),
        ['/v1/pets', '/v1/pets/{petId}', '/v1/pets', '/v1/pets', '/healthz', '/v1/docs', null],
      )
      assert.equal(lines[2].req.url, '/v1/pets?limit=1&cursor=cccccccc...')
      assert.equal(lines[3].code, 'unauthorized')
      const output = server.stdout() + server.stderr()
      for (const secret of [KEY, 'wrong-token-77', 'Bearer'])
        assert.ok(!output.includes(secret), `${secret} in the output`)
    } finally {
      await server.stop()
    }
  })

  it('--log pretty writes short aligned lines without colour off a terminal; --log off and --log-level warn write less', async () => {
    const pretty = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'pretty'])
    const off = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'off'])
    const warn = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log-level', 'warn'])
    try {
      for (const server of [pretty, off, warn]) {
        for (const headers of [auth(), {}]) await (await fetch(`${server.origin}/v1/pets`, { headers })).arrayBuffer()
      }
      await until(() => logLines(pretty).length === 2 && logLines(warn).length === 1, 'the lines')
      const lines = logLines(pretty)
      assert.match(lines[0] ?? '', /^\d\d:\d\d:\d\d\.\d{3} GET {5}200 +\d+\.\d ms +2 B {2}\/v1\/pets {2}\S+-1$/)
      assert.match(lines[1] ?? '', / GET {5}401 /)
      assert.ok(!pretty.stdout().includes('\x1b['), 'no colour when stdout is no terminal')
      assert.equal(JSON.parse(logLines(warn)[0] ?? '').res.statusCode, 401)
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.deepEqual(logLines(off), [])
    } finally {
      await Promise.all([pretty.stop(), off.stop(), warn.stop()])
    }
  })

  it("writes no key, token or Authorization value across the fuzzing suite's requests", async () => {
    const digest = `sha256:${createHash('sha256').update(DIGEST_KEY).digest('hex')}`
    const server = await startServer([
      '--port',
      '0',
      '--db',
      'memory',
      '--key',
      FUZZ_KEY,
      '--key',
      digest,
      '--log',
      'json',
      '--log-level',
      'debug',
    ])
    const tokens = new Set<string>([FUZZ_KEY, DIGEST_KEY])
    const seenIds: string[] = []
    const urls: string[] = []
    try {
      for (const c of fc.sample(requestCase, { seed: 20261123, numRuns: 200 })) {
        const request = toRequest({ ...c, aborted: false })
        // A Content-Length that lies leaves the server waiting for its 30 s request timeout: too slow here.
        request.headers.delete('content-length')
        urls.push(request.url)
        const token = /^bearer +(\S+)/i.exec(request.headers.get('authorization') ?? '')?.[1]
        if (token !== undefined && token.length >= 6) tokens.add(token)
        try {
          const init: RequestInit & { duplex?: 'half' } = {
            method: request.method,
            headers: request.headers,
            body: request.body,
            duplex: 'half',
          }
          const answer = await fetch(
            new URL(new URL(request.url).pathname + new URL(request.url).search, server.origin),
            init,
          )
          await answer.arrayBuffer()
          // Node answers by itself what it cannot parse (431, 400): before any handler, so no id and no line.
          const id = answer.headers.get('x-request-id')
          if (id !== null) seenIds.push(id)
        } catch {} // a method or body fetch cannot send
      }
      const logged = () => new Set(logLines(server).map((line) => JSON.parse(line).reqId))
      await until(() => seenIds.every((id) => logged().has(id)), 'a line per answered request')
      const output = server.stdout() + server.stderr()
      // A token that is also part of some request's URL (the fuzzer's `'a'.repeat(10_000)` serves as both)
      // shows up where the log rightly writes the URL: only a token found nowhere else proves a leak.
      const inUrls = (token: string) => urls.some((url) => url.includes(token))
      for (const token of tokens) {
        if (!inUrls(token)) assert.ok(!output.includes(token), `a token (${token.length} chars) in the output`)
      }
      assert.ok(seenIds.length > 100, `only ${seenIds.length} requests answered by the handler`)
    } finally {
      await server.stop()
    }
  })
})

describe('key rotation', () => {
  /** Requests on `connections` keep-alive clients until `stop` is set; every answer's status is counted. */
  function load(origin: string, key: () => string, connections = 8) {
    const statuses = new Map<number, number>()
    const failures: unknown[] = []
    let stopped = false
    const loops = Array.from({ length: connections }, async () => {
      while (!stopped) {
        try {
          const answer = await fetch(`${origin}/v1/pets?limit=5`, { headers: auth(key()) })
          await answer.arrayBuffer()
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        } catch (error) {
          failures.push(error)
        }
      }
    })
    return {
      statuses,
      failures,
      async stop() {
        stopped = true
        await Promise.all(loops)
      },
    }
  }

  for (const workers of [1, 2]) {
    it(`SIGHUP re-reads --keys-file under load (--workers ${workers}): no request dropped, old key 401 after, new key 200`, async () => {
      const keysFile = join(dir, `keys-${workers}`)
      writeFileSync(keysFile, 'old-key-1111\n')
      const db = workers > 1 ? `sqlite:${join(dir, `rotate-${workers}.db`)}` : 'memory'
      const server = await startServer([
        '--port',
        '0',
        '--db',
        db,
        '--keys-file',
        keysFile,
        '--workers',
        String(workers),
        '--log',
        'off',
      ])
      const reloads = () => server.stderr().match(/SIGHUP: \d+ key\(s\) in use/g)?.length ?? 0
      try {
        // Step one: both keys. The load keeps using the old one across the reload.
        let key = 'old-key-1111'
        const traffic = load(server.origin, () => key)
        await new Promise((resolve) => setTimeout(resolve, 300))
        writeFileSync(keysFile, '# rotating\nold-key-1111\nnew-key-2222\n')
        server.child.kill('SIGHUP')
        await until(() => reloads() === workers, 'every worker reloaded')
        await new Promise((resolve) => setTimeout(resolve, 200))
        // Step two: the new key only, the load already on it.
        key = 'new-key-2222'
        await new Promise((resolve) => setTimeout(resolve, 200))
        writeFileSync(keysFile, 'new-key-2222\n')
        server.child.kill('SIGHUP')
        await until(() => reloads() === 2 * workers, 'every worker reloaded again')
        await new Promise((resolve) => setTimeout(resolve, 200))
        await traffic.stop()
        assert.deepEqual(traffic.failures, [])
        assert.deepEqual([...traffic.statuses.keys()], [200], `statuses: ${[...traffic.statuses]}`)
        assert.ok((traffic.statuses.get(200) ?? 0) > 50, 'the load ran')
        // Fresh connections, so that every worker answers some.
        for (let i = 0; i < 8; i++) {
          const headers = { ...auth('old-key-1111'), connection: 'close' }
          assert.equal((await fetch(`${server.origin}/v1/pets`, { headers })).status, 401)
          const fresh = { ...auth('new-key-2222'), connection: 'close' }
          assert.equal((await fetch(`${server.origin}/v1/pets`, { headers: fresh })).status, 200)
        }
        // A file with no key keeps the keys in use, and says why.
        writeFileSync(keysFile, '# emptied by mistake\n')
        server.child.kill('SIGHUP')
        await until(
          () => (server.stderr().match(/holds no key; keeping the keys in use/g)?.length ?? 0) === workers,
          'refused',
        )
        assert.equal((await fetch(`${server.origin}/v1/pets`, { headers: auth('new-key-2222') })).status, 200)
        assert.ok(!server.stderr().includes('new-key-2222') && !server.stderr().includes('old-key-1111'))
      } finally {
        await server.stop()
      }
    })
  }
})

describe('metrics', () => {
  for (const workers of [1, 2]) {
    it(`--metrics-port serves Prometheus text with counts matching the traffic (--workers ${workers})`, async () => {
      const db = workers > 1 ? `sqlite:${join(dir, `metrics-${workers}.db`)}` : 'memory'
      const args = ['--port', '0', '--db', db, '--key', KEY, '--metrics-port', '0', '--log', 'off']
      const server = await startServer([...args, '--workers', String(workers)])
      try {
        await until(() => metricsUrl(server) !== undefined, 'the metrics line')
        const traffic: Array<[string, Record<string, string>, number]> = [
          ...Array.from({ length: 7 }, () => ['/v1/pets', auth(), 200] as [string, Record<string, string>, number]),
          ...Array.from({ length: 3 }, () => ['/v1/pets', {}, 401] as [string, Record<string, string>, number]),
          ['/v1/pets/12345', auth(), 404],
          ['/v1/nowhere', auth(), 404],
        ]
        for (const [path, headers, status] of traffic) {
          // Fresh connections, so that under --workers both workers answer some.
          const answer = await fetch(`${server.origin}${path}`, { headers: { ...headers, connection: 'close' } })
          await answer.arrayBuffer()
          assert.equal(answer.status, status)
        }
        const scrape = await fetch(metricsUrl(server) ?? '')
        assert.equal(scrape.status, 200)
        assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
        const samples = parsePrometheus(await scrape.text())
        const value = (name: string, labels: Record<string, string>) =>
          samples
            .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
            .reduce((sum, s) => sum + s.value, 0)
        const get = { method: 'GET' }
        assert.equal(value('http_requests_total', { ...get, route: '/v1/pets', status_code: '200' }), 7)
        assert.equal(value('http_requests_total', { ...get, route: '/v1/pets', status_code: '401' }), 3)
        assert.equal(value('http_requests_total', { ...get, route: '/v1/pets/{petId}', status_code: '404' }), 1)
        assert.equal(value('http_requests_total', { ...get, route: 'unmatched', status_code: '404' }), 1)
        assert.equal(value('http_requests_total', {}), traffic.length)
        assert.equal(value('http_request_duration_seconds_count', {}), traffic.length)
        assert.equal(value('http_request_duration_seconds_bucket', { le: '+Inf' }), traffic.length)
        assert.equal(value('http_requests_in_flight', {}), 0)
        assert.ok(
          samples.some((s) => s.name === 'process_cpu_user_seconds_total'),
          'the process defaults',
        )
        assert.equal((await fetch(`${server.origin}/metrics`)).status, 404, 'not on the API port')
      } finally {
        await server.stop()
      }
    })
  }

  it('counts the PostgreSQL pool', {
    skip: !process.env.PETSTORE_TEST_POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL unset',
  }, async () => {
    const url = new URL(process.env.PETSTORE_TEST_POSTGRES_URL ?? '')
    const schema = `ops_metrics_${process.pid}_${Date.now()}`
    url.searchParams.set('schema', schema)
    const server = await startServer([
      '--port',
      '0',
      '--db',
      url.href,
      '--key',
      KEY,
      '--metrics-port',
      '0',
      '--log',
      'off',
    ])
    try {
      await until(() => metricsUrl(server) !== undefined, 'the metrics line')
      for (let i = 0; i < 3; i++) await (await fetch(`${server.origin}/v1/pets`, { headers: auth() })).arrayBuffer()
      const samples = parsePrometheus(await (await fetch(metricsUrl(server) ?? '')).text())
      const pool = (state: string) =>
        samples.find((s) => s.name === 'petstore_db_pool_connections' && s.labels.state === state)?.value
      assert.ok((pool('total') ?? 0) >= 1, 'an open connection')
      assert.equal(pool('waiting'), 0)
      assert.ok(pool('idle') !== undefined)
    } finally {
      await server.stop()
      const pg = (await import('pg')).default
      const client = new pg.Client({ connectionString: process.env.PETSTORE_TEST_POSTGRES_URL })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await client.end()
    }
  })
})
