/**
 * Slow and hostile clients: headers sent byte by byte, bodies that never end,
 * more connections than the cap, a 1 GB upload, and the headers every answer
 * carries.
 *
 * The timing cases run `serve()` in-process with limits of a second or less;
 * the binary runs with its defaults (5 s for a first request head), checked
 * once by a slow loris that takes those 5 s.
 *
 * Run: node --import tsx --test test/hostile-clients.test.ts
 */
import assert from 'node:assert/strict'
import { after, describe, type TestContext, test } from 'node:test'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import { type Answer, dripFeed, memoryMiB, openSocket, request } from './helpers/raw-http.js'
import { closeInProcess, connections, serveInProcess } from './helpers/serve-in-process.js'
import { killAll, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'k'
const AUTH = { authorization: `Bearer ${KEY}` }
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' }
/**
 * "At once", for a close or an answer: well before the 5 s after which a timeout would have
 * closed the connection anyway. A loaded 2-core machine has taken 570 ms.
 */
const AT_ONCE_MS = 2_000
/** The API's default `maxBodyBytes`. */
const MAX_BODY_BYTES = 100 * 1024

after(async () => {
  await closeInProcess()
  await killAll()
})

/** A raw answer Node's own checks sent: a JSON error of `status` and `code`, with the API's headers. */
function assertRawError(received: string, status: number, code: string, label: string): void {
  assert.match(received, new RegExp(`^HTTP/1\\.1 ${status} `), `${label}: status`)
  const [head = '', body = ''] = received.split('\r\n\r\n')
  assert.match(head, /^content-type: application\/json$/im, `${label}: content-type`)
  assert.match(head, /^x-content-type-options: nosniff$/im, `${label}: nosniff`)
  assert.match(head, /^cache-control: no-store$/im, `${label}: no-store`)
  assert.equal(JSON.parse(body).code, code, `${label}: code`)
  assert.equal(JSON.parse(body).status, status, `${label}: Error.status`)
}

/** `GET /v1/pets` on a connection of its own: answered 200, and quickly, whatever else the server is up to. */
async function assertServing(port: number, label: string): Promise<void> {
  const started = performance.now()
  const answer = await request(false, port, { path: '/v1/pets', headers: AUTH })
  const ms = performance.now() - started
  assert.equal(answer.status, 200, `${label}: ${answer.text}`)
  assert.ok(ms < AT_ONCE_MS, `${label}: answered in ${Math.round(ms)} ms`)
}

/** What an upload of `total` bytes, sent chunked and never held in memory, came to. */
interface Upload {
  /** The status line and headers of the answer, and as much of its body as arrived. */
  answer?: { status: number; head: string; body: string }
  /** Bytes of body handed to the socket before the server cut the connection (or all of them). */
  sent: number
  /** From the first byte to the answer, and to the end of the connection. */
  answeredAfterMs: number
  endedAfterMs: number
  error?: string
}

/**
 * POSTs `total` bytes of `a` as a chunked body over a raw socket, 64 KiB a
 * chunk with backpressure, reusing one buffer, until the connection ends.
 * (`node:http`'s client stops relaying 'drain' once the answer has arrived,
 * and a client that goes on sending after its answer is the case under test.)
 */
async function uploadChunked(port: number, total: number, path = '/v1/pets', key = KEY): Promise<Upload> {
  const chunk = Buffer.alloc(64 * 1024, 'a')
  const frame = Buffer.from(`${chunk.byteLength.toString(16)}\r\n`)
  const connection = await openSocket(port)
  const { socket } = connection
  const started = performance.now()
  let answeredAfterMs = Number.NaN
  socket.on('data', () => {
    if (Number.isNaN(answeredAfterMs)) answeredAfterMs = performance.now() - started
  })
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
  )
  let sent = 0
  let open = true
  void connection.closed.then(() => {
    open = false
  })
  while (sent < total && open) {
    socket.write(frame)
    socket.write(chunk)
    sent += chunk.byteLength
    if (!socket.write('\r\n')) {
      await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), connection.closed])
    } else {
      // A turn of the event loop, to read what came: a server draining fast takes every write at once,
      // and the write that meets its reset destroyed the socket with the 413 still unread.
      await setImmediate()
    }
  }
  if (open) socket.end('0\r\n\r\n')
  const { afterMs, error } = await connection.closed
  const received = connection.received()
  const at = received.indexOf('\r\n\r\n')
  const answer =
    at < 0
      ? undefined
      : {
          status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1]),
          head: received.slice(0, at),
          body: received.slice(at + 4),
        }
  return { answer, sent, answeredAfterMs, endedAfterMs: afterMs, error }
}

describe('slow and hostile clients', { concurrency: true, timeout: 30_000 }, () => {
  test('headers sent byte by byte, or none at all: 408 and disconnected at headersTimeoutMs', async () => {
    // requestTimeoutMs far above: a cut at headersTimeoutMs is told apart from it with room for a loaded machine.
    const server = await serveInProcess(KEY, { headersTimeoutMs: 500, requestTimeoutMs: 5_000 })
    const loris = await openSocket(server.port)
    loris.socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\n')
    dripFeed(loris.socket, 'X-Slow: aaaaaaaaaaaaaaaa\r\n', 20)
    const silent = await openSocket(server.port)

    // Neither holds the server: others are answered meanwhile.
    for (let i = 0; i < 5; i++) {
      await assertServing(server.port, `request ${i} while the slow clients hang on`)
      await sleep(50)
    }
    for (const [name, client] of Object.entries({ loris, silent })) {
      const { afterMs } = await client.closed
      assertRawError(client.received(), 408, 'request_timeout', name)
      assert.ok(afterMs >= 450 && afterMs < 3_000, `${name}: disconnected after ${Math.round(afterMs)} ms`)
    }
  })

  test('a body that never ends, chunked or sized: 408 and disconnected at requestTimeoutMs', async () => {
    const server = await serveInProcess(KEY, { headersTimeoutMs: 500, requestTimeoutMs: 1_000 })
    const head = (framing: string) =>
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`
    const chunked = await openSocket(server.port)
    chunked.socket.write(head('Transfer-Encoding: chunked'))
    dripFeed(chunked.socket, '1\r\n \r\n', 10) // one-byte chunks of whitespace, each byte on its own
    const sized = await openSocket(server.port)
    sized.socket.write(head('Content-Length: 1000'))
    dripFeed(sized.socket, ' ', 20) // 50 bytes a second: the 1000 would take 20 s

    await sleep(300)
    await assertServing(server.port, 'while two uploads crawl')
    for (const [name, client] of Object.entries({ chunked, sized })) {
      const { afterMs } = await client.closed
      assertRawError(client.received(), 408, 'request_timeout', name)
      // Room for a loaded machine; the uploads alone would take 20 s.
      assert.ok(afterMs >= 950 && afterMs < 3_000, `${name}: disconnected after ${Math.round(afterMs)} ms`)
    }
    await assertServing(server.port, 'after')
  })

  test('what Node rejects by itself is a JSON error with the same headers, and the connection is closed', async () => {
    const server = await serveInProcess(KEY, {})
    const cases = {
      'not HTTP': ['GARBAGE\r\n\r\n', 400, 'bad_request'],
      'headers past 16 KiB': [
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'headers_too_large',
      ],
    } as const
    for (const [label, [text, status, code]] of Object.entries(cases)) {
      const client = await openSocket(server.port)
      client.socket.write(text)
      const { afterMs } = await client.closed
      assertRawError(client.received(), status, code, label)
      assert.ok(afterMs < AT_ONCE_MS, `${label}: closed after ${Math.round(afterMs)} ms`)
    }
  })

  test('past maxConnections, all busy, a new connection is closed at once; room again once one ends', async () => {
    const server = await serveInProcess(KEY, { maxConnections: 4 })
    let requests = 0
    server.server.on('request', () => requests++)
    const held = await Promise.all(Array.from({ length: 4 }, () => openSocket(server.port)))
    // A request in flight on each (its body never ends): none is idle, so none can make room (test/idle-connections).
    for (const client of held) {
      client.socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      )
    }
    await until(() => requests === 4, 'the server holds 4 requests in flight')

    const extra = await openSocket(server.port)
    const { afterMs } = await extra.closed
    assert.equal(extra.received(), '', 'no answer on a connection past the cap')
    assert.ok(afterMs < AT_ONCE_MS, `closed after ${Math.round(afterMs)} ms`)
    await assert.rejects(request(false, server.port, { path: '/v1/pets', headers: AUTH }), 'a request past the cap')

    held[0]?.socket.destroy()
    await until(async () => (await connections(server.server)) === 3, 'a held connection is gone')
    await assertServing(server.port, 'with room under the cap')
    for (const client of held) client.socket.destroy()
  })

  test('the binary: a 1 GB chunked upload gets its 413, is cut off soon after, and memory stays flat', async (t: TestContext) => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const pid = server.child.pid as number
      // Warm up: the first oversized upload loads and compiles what every later one uses.
      for (let i = 0; i < 2; i++) assert.equal((await uploadChunked(server.port, 20 * 2 ** 20)).answer?.status, 413)
      await sleep(200)
      const before = memoryMiB(pid)

      const upload = await uploadChunked(server.port, 2 ** 30)
      await sleep(200)
      const afterUpload = memoryMiB(pid)
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
      t.diagnostic(
        `1 GiB offered: 413 after ${Math.round(upload.answeredAfterMs)} ms, connection ended after ` +
          `${Math.round(upload.endedAfterMs)} ms (${upload.error ?? 'closed'}), ${mib(upload.sent)} MiB sent; ` +
          `server RSS ${before.rss.toFixed(1)} → ${afterUpload.rss.toFixed(1)} MiB, ` +
          `peak ${before.peak.toFixed(1)} → ${afterUpload.peak.toFixed(1)} MiB`,
      )
      assert.equal(upload.answer?.status, 413, JSON.stringify(upload))
      assert.match(upload.answer?.body ?? '', /"code":"payload_too_large"/)
      assert.match(upload.answer?.head ?? '', /^x-content-type-options: nosniff$/im)
      // The server drains at most 8 MiB after its answer; the rest in flight is socket buffers.
      assert.ok(upload.sent < 64 * 2 ** 20, `cut off after ${mib(upload.sent)} MiB`)
      assert.ok(upload.endedAfterMs < 5_000, `over in ${Math.round(upload.endedAfterMs)} ms`)
      assert.ok(afterUpload.rss - before.rss < 50, 'RSS grew by less than 50 MiB')
      assert.ok(afterUpload.peak - before.peak < 50, 'peak RSS grew by less than 50 MiB')
      await assertServing(server.port, 'after the upload')
    } finally {
      await server.stop()
    }
  })

  test('the binary: a body no route reads is drained to 8 MiB at most, on every path', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory', '--test-control'])
    try {
      for (const [path, key, status] of [
        ['/healthz', KEY, 405],
        ['/nowhere', KEY, 404],
        ['/v1/pets', 'wrong-key', 401],
        ['/__petstore/reset', KEY, 204],
      ] as const) {
        const upload = await uploadChunked(server.port, 2 ** 30, path, key)
        assert.equal(upload.answer?.status, status, `${path}: ${JSON.stringify(upload.answer)}`)
        // The cap plus what socket buffers hold; without one, 2 s of draining took gigabytes.
        assert.ok(upload.sent < 64 * 2 ** 20, `${path}: cut off after ${(upload.sent / 2 ** 20).toFixed(1)} MiB`)
        assert.ok(upload.endedAfterMs < 5_000, `${path}: over in ${Math.round(upload.endedAfterMs)} ms`)
      }
      await assertServing(server.port, 'after the uploads')
    } finally {
      await server.stop()
    }
  })

  test('serve() with a handler of your own: a body it never reads is cut off within the caps', async () => {
    // Through @whatwg-node/server, whose stream reader destroys a request it stops reading.
    const server = await serveInProcess(KEY, { handler: () => new Response('ok') })
    const upload = await uploadChunked(server.port, 2 ** 30, '/anything')
    assert.equal(upload.answer?.status, 200, JSON.stringify(upload.answer))
    assert.ok(upload.sent < 64 * 2 ** 20, `cut off after ${(upload.sent / 2 ** 20).toFixed(1)} MiB`)
    assert.ok(upload.endedAfterMs < 5_000, `over in ${Math.round(upload.endedAfterMs)} ms`)
  })

  test('the binary, with its defaults: a slow loris is cut off after 5 s (its first request), and served meanwhile', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const loris = await openSocket(server.port)
      loris.socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\n')
      dripFeed(loris.socket, 'X-Slow: aaaaaaaaaaaaaaaa\r\n', 500)
      await sleep(1_000)
      await assertServing(server.port, 'while the loris hangs on')
      const { afterMs } = await loris.closed
      assert.match(loris.received(), /^HTTP\/1\.1 408 /)
      // The first-request deadline, 5 s, checked every half second (headersTimeout, 10 s, bounds later requests).
      assert.ok(afterMs >= 4_900 && afterMs < 6_000, `disconnected after ${Math.round(afterMs)} ms`)
    } finally {
      await server.stop()
    }
  })

  test('the binary: every answer carries X-Content-Type-Options: nosniff and Cache-Control: no-store', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const created = await request(false, server.port, {
        method: 'POST',
        path: '/v1/pets',
        headers: JSON_HEADERS,
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      })
      const answers: Record<string, Answer> = {
        'POST /v1/pets (201)': created,
        'GET /v1/pets (200)': await request(false, server.port, { path: '/v1/pets', headers: AUTH }),
        'GET /v1/pets/{id} (200)': await request(false, server.port, {
          path: `/v1/pets/${JSON.parse(created.text).id}`,
          headers: AUTH,
        }),
        'GET /v1/pets/999 (404)': await request(false, server.port, { path: '/v1/pets/999', headers: AUTH }),
        'GET /v1/pets without a key (401)': await request(false, server.port, { path: '/v1/pets' }),
        'DELETE /v1/pets (405)': await request(false, server.port, {
          method: 'DELETE',
          path: '/v1/pets',
          headers: AUTH,
        }),
        'POST invalid JSON (400)': await request(false, server.port, {
          method: 'POST',
          path: '/v1/pets',
          headers: JSON_HEADERS,
          body: '{',
        }),
        'POST too large (413)': await request(false, server.port, {
          method: 'POST',
          path: '/v1/pets',
          headers: JSON_HEADERS,
          body: 'a'.repeat(MAX_BODY_BYTES + 1),
        }),
        'GET /v1/openapi.json': await request(false, server.port, { path: '/v1/openapi.json' }),
        'GET /healthz': await request(false, server.port, { path: '/healthz' }),
        'GET /elsewhere (404)': await request(false, server.port, { path: '/elsewhere' }),
      }
      for (const [label, answer] of Object.entries(answers)) {
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', label)
        assert.equal(answer.headers['cache-control'], 'no-store', label)
      }
      assert.deepEqual(
        Object.values(answers).map((answer) => answer.status),
        [201, 200, 200, 404, 401, 405, 400, 413, 200, 200, 404],
      )
    } finally {
      await server.stop()
    }
  })
})
