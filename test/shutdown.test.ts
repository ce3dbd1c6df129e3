/**
 * Shutdown under load: SIGTERM while 100 requests are in flight, a second
 * SIGTERM, a request that never ends, and `serve().close()` itself.
 *
 * A request is "in flight" here in the strictest sense: its body is only half
 * sent when the signal goes, so the server cannot have answered it yet; it
 * must then finish with its normal answer.
 *
 * Run: node --import tsx --test test/shutdown.test.ts
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { type RunningServer, serve } from '../adapters/node/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { type Answer, connectError, openSocket, type RawSocket, request } from './helpers/raw-http.js'
import { killAll, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'k'
const JSON_HEADERS = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const IN_FLIGHT = 100
const STATUSES = ['available', 'pending', 'sold'] as const

const tempDirs: string[] = []
const inProcess: RunningServer[] = []

after(async () => {
  await killAll()
  for (const running of inProcess) running.server.closeAllConnections()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** Resolves with how `child` ended and when (`performance.now()`). */
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null; at: number }> {
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  )
}

/** A POST whose body is sent in two parts: the first at once, the rest when `finish()` is called. */
interface SlowRequest {
  /** Resolves once the server reads the body (its 100 Continue) and the first part is written. */
  started: Promise<void>
  finish(): void
  /** The answer, with when it arrived. */
  answer: Promise<Answer & { at: number }>
  /** Whether any answer has arrived yet. */
  answered(): boolean
}

function slowRequest(agent: http.Agent | false, port: number, body: string, path = '/v1/pets'): SlowRequest {
  const bytes = Buffer.from(body)
  let arrived = false
  const outgoing = http.request({
    host: '127.0.0.1',
    port,
    agent,
    method: 'POST',
    path,
    headers: { ...JSON_HEADERS, 'content-length': bytes.length, expect: '100-continue' },
  })
  outgoing.flushHeaders()
  const answer = new Promise<Answer & { at: number }>((resolve, reject) => {
    outgoing.on('response', (response) => {
      arrived = true
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
      })
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, at: performance.now() }),
      )
      response.on('error', reject)
    })
    outgoing.on('error', reject)
  })
  answer.catch(() => {}) // awaited by the test; not unhandled meanwhile
  const half = Math.floor(bytes.length / 2)
  const started = once(outgoing, 'continue').then(
    () => new Promise<void>((resolve) => outgoing.write(bytes.subarray(0, half), () => resolve())),
  )
  started.catch(() => {}) // an error is the answer's too, and awaited there
  return { started, finish: () => outgoing.end(bytes.subarray(half)), answer, answered: () => arrived }
}

describe('shutdown', { concurrency: true, timeout: 30_000 }, () => {
  test(`SIGTERM with ${IN_FLIGHT} uploads in flight: all get their 201, new connections are refused, the store is closed, exit 0`, async (t: TestContext) => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-shutdown-'))
    tempDirs.push(dir)
    const file = join(dir, 'pets.db')
    const server = await startServer(['--port', '0', '--key', KEY, '--db', `sqlite:${file}`])
    // Keep-alive, as a client pool would: the server must not wait for these connections to idle out.
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
    try {
      const pets = Array.from({ length: IN_FLIGHT }, (_, i) => ({
        name: `in-flight-${i}`,
        categoryId: i,
        status: STATUSES[i % STATUSES.length],
      }))
      const requests = pets.map((pet) => slowRequest(agent, server.port, JSON.stringify(pet)))
      // The server has read every request's headers and waits for the rest of its body.
      await Promise.all(requests.map((slow) => slow.started))

      const exited = exitOf(server.child)
      const signalled = performance.now()
      assert.equal(requests.filter((slow) => slow.answered()).length, 0, 'no answer before the signal')
      server.child.kill('SIGTERM')
      await until(() => server.stderr().includes('SIGTERM'), 'SIGTERM on stderr', 5_000)
      assert.equal(await connectError(server.port), 'ECONNREFUSED', 'a new connection after SIGTERM is refused')
      assert.equal(requests.filter((slow) => slow.answered()).length, 0, 'no answer before the bodies are complete')

      // The rest of each body, spread over half a second.
      for (const [i, slow] of requests.entries()) setTimeout(() => slow.finish(), i * 5)
      const answers = await Promise.all(requests.map((slow) => slow.answer))
      for (const [i, answer] of answers.entries()) {
        assert.equal(answer.status, 201, `request ${i}: ${answer.text}`)
        const created = JSON.parse(answer.text) as { id: number }
        assert.deepEqual(created, { id: created.id, ...pets[i] }, `request ${i}`)
        assert.equal(answer.headers.connection, 'close', `request ${i}: the answer says the connection ends`)
      }
      const lastAnswer = Math.max(...answers.map((answer) => answer.at))

      const exit = await exited
      t.diagnostic(
        `exit ${exit.code} ${Math.round(exit.at - signalled)} ms after SIGTERM, ` +
          `${Math.round(exit.at - lastAnswer)} ms after the last of ${IN_FLIGHT} answers`,
      )
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, server.stderr())
      assert.ok(exit.at - lastAnswer < 1_000, `exited ${Math.round(exit.at - lastAnswer)} ms after the last answer`)

      // Closed, not abandoned: SQLite folds its write-ahead log into the file when the last connection closes.
      assert.equal(existsSync(`${file}-wal`), false, 'no -wal file left: the store was closed')
      // Read back through the store (whichever SQLite driver this Node has), not the server.
      const store = sqliteStore({ path: file })
      try {
        const rows = await store.list({ limit: 100 })
        assert.deepEqual(rows.map((row) => row.name).sort(), pets.map((pet) => pet.name).sort())
      } finally {
        await store.close?.()
      }
    } finally {
      agent.destroy()
      await server.stop('SIGKILL')
    }
  })

  test('a second SIGTERM while a request hangs exits 1 at once', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const hanging = slowRequest(false, server.port, JSON.stringify({ name: 'Never finished', categoryId: 1 }))
      await hanging.started
      await sleep(200)
      const exited = exitOf(server.child)
      server.child.kill('SIGTERM')
      await until(() => server.stderr().includes('SIGTERM'), 'SIGTERM on stderr', 5_000)
      await sleep(500)
      assert.equal(server.child.exitCode, null, 'after one SIGTERM the server still waits for the request')

      const again = performance.now()
      server.child.kill('SIGTERM')
      const exit = await exited
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 1, signal: null })
      assert.ok(exit.at - again < 1_000, `exited ${Math.round(exit.at - again)} ms after the second SIGTERM`)
      assert.match(server.stderr(), /SIGTERM again/)
    } finally {
      await server.stop('SIGKILL')
    }
  })

  test('a request that never ends delays exit by the 10 s shutdown timeout, no more; exit 0', async (t: TestContext) => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const hanging = slowRequest(false, server.port, JSON.stringify({ name: 'Never finished', categoryId: 1 }))
      await hanging.started
      await sleep(200)
      const exited = exitOf(server.child)
      const signalled = performance.now()
      server.child.kill('SIGTERM')
      const exit = await exited
      t.diagnostic(`exit ${exit.code} ${Math.round(exit.at - signalled)} ms after SIGTERM`)
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null })
      const waited = exit.at - signalled
      assert.ok(waited >= 9_900 && waited < 12_000, `exited ${Math.round(waited)} ms after SIGTERM`)
      await assert.rejects(hanging.answer, 'the hanging request gets no answer: its connection is cut')
      assert.match(server.stderr(), /1 connection\(s\) still open 10000 ms after close\(\), cut/)
    } finally {
      await server.stop('SIGKILL')
    }
  })

  test('serve().close(): idle keep-alive connections go at once, a busy one right after its answer', async () => {
    const running = await serve({
      port: 0,
      handler: async (req) => {
        if (new URL(req.url).pathname === '/slow') await sleep(300)
        return new Response('done')
      },
    })
    inProcess.push(running)
    // Two clients: one leaves its connection idle, the other has a request in flight.
    const idleClient = new http.Agent({ keepAlive: true })
    const busyClient = new http.Agent({ keepAlive: true })
    try {
      assert.equal((await request(idleClient, running.port, { path: '/fast' })).status, 200)
      const idle = Object.values(idleClient.freeSockets)[0]?.[0]
      assert.ok(idle, 'a keep-alive connection left idle')
      const idleClosed = new Promise<number>((resolve) => idle.once('close', () => resolve(performance.now())))

      const slow = request(busyClient, running.port, { path: '/slow' })
      await sleep(100)
      const closing = performance.now()
      const closed = running.close().then(() => performance.now())
      assert.ok((await idleClosed) - closing < 100, 'the idle connection is closed at once')
      const answer = await slow
      const answered = performance.now()
      assert.equal(answer.status, 200)
      assert.equal(answer.text, 'done')
      assert.equal(answer.headers.connection, 'close')
      // Not keepAliveTimeout (5 s) later.
      const after = (await closed) - answered
      assert.ok(after < 200, `closed ${Math.round(after)} ms after the answer`)
    } finally {
      idleClient.destroy()
      busyClient.destroy()
    }
  })

  test('serve().close(): connections that have sent no whole request head go at once, a first or a later one, not at a timeout', async () => {
    const running = await serve({ port: 0, handler: async () => new Response('done') })
    inProcess.push(running)
    // openSocket records a reset rather than throwing: a reset is one way to be closed.
    const connect = async (sending: string) => {
      const client = await openSocket(running.port)
      if (sending !== '') client.socket.write(sending)
      return client
    }
    const silent = await connect('')
    const halfHead = await connect('GET / HTTP/1.1\r\nHost: x\r\n')
    // A kept-alive connection that has begun its next request head: Node's closeIdleConnections leaves it.
    const keptHalf = await connect('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    await once(keptHalf.socket, 'data')
    keptHalf.socket.write('GET / HTTP/1.1\r\nHo')
    await sleep(100)
    const closing = performance.now()
    const closedAt = (client: RawSocket) => client.closed.then(() => performance.now() - closing)
    const [closed, silentGone, halfGone, keptHalfGone] = await Promise.all([
      running.close().then(() => performance.now() - closing),
      closedAt(silent),
      closedAt(halfHead),
      closedAt(keptHalf),
    ])
    // Not the 5 s of firstRequestTimeoutMs, nor keepAliveTimeoutMs.
    for (const [what, ms] of [
      ['close()', closed],
      ['the silent connection', silentGone],
      ['the half head', halfGone],
      ['the half second head', keptHalfGone],
    ] as const) {
      assert.ok(ms < 1_000, `${what} took ${Math.round(ms)} ms`)
    }
  })

  test('serve().close(): an answer begun before close() ends, and its connection goes at once, though the next head has begun', async () => {
    // A streamed answer whose head went out before close(): it stays keep-alive, so the connection is idle after it.
    const running = await serve({
      port: 0,
      handler: async () => {
        let chunks = 0
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            chunks += 1
            if (chunks === 1) return controller.enqueue(new TextEncoder().encode('begun,'))
            await sleep(300)
            controller.enqueue(new TextEncoder().encode('done'))
            controller.close()
          },
        })
        return new Response(body)
      },
    })
    inProcess.push(running)
    const client = await openSocket(running.port)
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    while (!client.received().includes('begun,')) await sleep(5)
    // The next request's head, begun while the answer streams: Node's closeIdleConnections would leave it.
    client.socket.write('GET / HTTP/1.1\r\nHo')
    const closing = performance.now()
    const closed = running.close().then(() => performance.now() - closing)
    const gone = client.closed.then(() => performance.now() - closing)
    const [closeMs, goneMs] = await Promise.all([closed, gone])
    assert.match(client.received(), /^HTTP\/1\.1 200 [\s\S]*begun,[\s\S]*done/, 'the answer in flight is finished')
    assert.ok(
      closeMs < 1_500 && goneMs < 1_500,
      `close() took ${Math.round(closeMs)} ms, the connection ${Math.round(goneMs)} ms`,
    )
  })

  test('serve().close() cuts what is still open after shutdownTimeoutMs', async () => {
    const running = await serve({
      port: 0,
      shutdownTimeoutMs: 300,
      handler: async (req) => new Response(await req.text()),
    })
    inProcess.push(running)
    const hanging = slowRequest(false, running.port, '{"name":"x","categoryId":1}', '/')
    await hanging.started
    await sleep(100)
    const closing = performance.now()
    await running.close()
    const took = performance.now() - closing
    // Far below what would end it otherwise (the request's 30 s timeout), with room for a loaded machine.
    assert.ok(took >= 290 && took < 2_500, `close() took ${Math.round(took)} ms`)
    await assert.rejects(hanging.answer, 'the hanging request gets no answer: its connection is cut')
  })
})
