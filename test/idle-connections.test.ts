/**
 * Connection floods must not lock out real clients (issue 16, issue 17 item 5):
 * idle sockets past the cap, a slow loris on 200 connections, and an attacker
 * who reconnects, each while a legitimate client from another address is
 * timed. The attacker binds 127.0.0.2, the legitimate client 127.0.0.1.
 *
 * Run: node --import tsx --test test/idle-connections.test.ts
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { after, describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseCli, UsageError } from '../bin/options.js'
import { request } from './helpers/raw-http.js'
import { closeInProcess, connections, serveInProcess } from './helpers/serve-in-process.js'
import { killAll, startServer } from './helpers/spawn-server.js'

const KEY = 'k'
const AUTH = { authorization: `Bearer ${KEY}` }
const ATTACKER = '127.0.0.2'

after(async () => {
  await closeInProcess()
  await killAll()
})

/** An attacker's sockets from {@link ATTACKER}: idle, or sending what `onOpen` writes. */
class Flood {
  readonly sockets = new Set<net.Socket>()
  private stopped = false
  /** Sockets the server closed (or reset), and what they received. */
  readonly ended: { afterMs: number; received: string }[] = []

  constructor(
    private readonly port: number,
    private readonly options: { reconnectAfterMs?: number; onOpen?: (socket: net.Socket) => void } = {},
  ) {}

  /** Opens `count` sockets, a batch at a time (a listen backlog is 511), and resolves once all have connected. */
  async open(count: number): Promise<void> {
    for (let done = 0; done < count; done += 100) {
      await Promise.all(Array.from({ length: Math.min(100, count - done) }, () => this.one()))
    }
  }

  private one(): Promise<void> {
    return new Promise((resolve) => {
      const socket = net.connect({ port: this.port, host: '127.0.0.1', localAddress: ATTACKER })
      const startedAt = performance.now()
      let received = ''
      socket.setEncoding('latin1')
      socket.on('data', (chunk: string) => {
        received += chunk
      })
      socket.on('error', () => {})
      socket.once('connect', () => {
        this.options.onOpen?.(socket)
        resolve()
      })
      socket.once('close', () => {
        this.sockets.delete(socket)
        this.ended.push({ afterMs: performance.now() - startedAt, received })
        resolve()
        const { reconnectAfterMs } = this.options
        if (reconnectAfterMs !== undefined) setTimeout(() => this.stopped || void this.one(), reconnectAfterMs)
      })
      this.sockets.add(socket)
    })
  }

  /** Closes every socket (a reconnecting flood reopens them at once). */
  cycle(): void {
    for (const socket of this.sockets) socket.destroy()
  }

  /** The attacker, every 10 s: closes what is still open and opens `count` sockets again. */
  async reopen(count: number): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await this.open(count)
  }

  stop(): void {
    this.stopped = true
    for (const socket of this.sockets) socket.destroy()
  }
}

/** Sends a request head one byte a second (the first at once), until the socket closes. */
function slowLoris(socket: net.Socket): void {
  const head = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n'
  let index = 0
  const timer = setInterval(() => {
    if (!socket.writable) return clearInterval(timer)
    socket.write(head[index++ % head.length] as string)
  }, 1_000)
  socket.write(head[index++] as string)
  socket.once('close', () => clearInterval(timer))
}

/** `count` GETs from 127.0.0.1, each on a connection of its own, `gapMs` apart: every one must get its 200. */
async function timeLegitimate(port: number, count: number, gapMs = 0): Promise<{ p99: number; max: number }> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const answer = await request(false, port, { path: '/v1/pets', headers: AUTH })
    times.push(performance.now() - started)
    assert.equal(answer.status, 200, `request ${i}: ${answer.text}`)
    if (gapMs > 0) await sleep(gapMs)
  }
  times.sort((a, b) => a - b)
  return { p99: times[Math.ceil(count * 0.99) - 1] as number, max: times[count - 1] as number }
}

/** serve()'s and the binary's `firstRequestTimeoutMs` when none is given (its `@default`). */
const FIRST_REQUEST_MS = 5_000

/**
 * A client kept out by the flood would wait for room until the server's
 * first-request deadline (`keptOutMs`) frees a socket. So "served" means far
 * below that: p99 under half of it. Every request must be answered 200 as
 * well (timeLegitimate). A fixed bound of 100 ms failed on a slow machine
 * while every request was served.
 */
function assertServed(t: TestContext, timing: { p99: number; max: number }, label: string, keptOutMs: number): void {
  t.diagnostic(`${label}: p99 ${timing.p99.toFixed(1)} ms, max ${timing.max.toFixed(1)} ms (bound ${keptOutMs / 2} ms)`)
  assert.ok(timing.p99 < keptOutMs / 2, `${label}: p99 ${timing.p99.toFixed(1)} ms`)
}

/** A JSON 408 with the API's headers, as Node's own header timeout answers. */
function assert408(received: string, label: string): void {
  assert.match(received, /^HTTP\/1\.1 408 /, `${label}: ${JSON.stringify(received.slice(0, 80))}`)
  const [head = '', body = ''] = received.split('\r\n\r\n')
  assert.match(head, /^content-type: application\/json$/im)
  assert.match(head, /^cache-control: no-store$/im)
  assert.match(head, /^x-content-type-options: nosniff$/im)
  assert.deepEqual(JSON.parse(body), {
    code: 'request_timeout',
    message: 'The request was not received in time',
    status: 408,
  })
}

describe('idle-connection floods', { concurrency: false, timeout: 60_000 }, () => {
  test('serve(), cap 64: 100 idle sockets from one client, then 100 requests from another, all answered', async (t) => {
    const server = await serveInProcess(KEY, { maxConnections: 64 })
    const flood = new Flood(server.port)
    await flood.open(100)
    try {
      assertServed(t, await timeLegitimate(server.port, 100), 'past 100 idle sockets', FIRST_REQUEST_MS)
      assert.ok((await connections(server.server)) <= 64, 'the cap holds')
    } finally {
      flood.stop()
    }
  })

  test('serve(), cap 1024: 2,000 idle sockets, then 100 requests, all answered', async (t) => {
    const server = await serveInProcess(KEY, { maxConnections: 1024 })
    const flood = new Flood(server.port)
    await flood.open(2_000)
    try {
      assertServed(t, await timeLegitimate(server.port, 100), 'past 2,000 idle sockets', FIRST_REQUEST_MS)
      assert.ok((await connections(server.server)) <= 1024, 'the cap holds')
    } finally {
      flood.stop()
    }
  })

  test('serve(): a slow loris on 200 connections gets its 408 at firstRequestTimeoutMs, others are served', async (t) => {
    const firstRequestTimeoutMs = 2_000
    const server = await serveInProcess(KEY, { firstRequestTimeoutMs })
    const flood = new Flood(server.port, { onOpen: slowLoris })
    await flood.open(200)
    try {
      assertServed(t, await timeLegitimate(server.port, 100, 15), 'while 200 slow clients drip', firstRequestTimeoutMs)
      while (flood.ended.length < 200 && flood.sockets.size > 0) await sleep(100)
      assert.equal(flood.ended.length, 200)
      for (const [i, ended] of flood.ended.entries()) {
        assert408(ended.received, `slow client ${i}`)
        // Node's own headersTimeout (10 s) would be later.
        assert.ok(ended.afterMs < 3_500, `slow client ${i} cut after ${Math.round(ended.afterMs)} ms`)
      }
    } finally {
      flood.stop()
    }
  })

  test('serve(), cap 64: 200 sockets, each reconnecting a second after the server closes it, keep no one out', async (t) => {
    // The attacker reconnects every 10 s; this one 10 times as often. One that reconnects in a tight loop
    // is a connection-rate flood, for a firewall (README); in this process it would also starve the test's own client.
    const firstRequestTimeoutMs = 1_000
    const server = await serveInProcess(KEY, { maxConnections: 64, firstRequestTimeoutMs })
    const flood = new Flood(server.port, { reconnectAfterMs: 1_000 })
    await flood.open(200)
    try {
      assertServed(t, await timeLegitimate(server.port, 100, 20), 'while 200 sockets reconnect', firstRequestTimeoutMs)
      assert.ok(flood.ended.length >= 136, `the server closed ${flood.ended.length} of the attacker's sockets`)
    } finally {
      flood.stop()
    }
  })

  test('serve(), cap 2: a connection whose pipelined create still waits for its body is busy, not idle, after its first answer', async () => {
    const server = await serveInProcess(KEY, { maxConnections: 2 })
    const body = '{"name":"Rex","categoryId":1}'
    const busy = net.connect(server.port, '127.0.0.1')
    const idle = net.connect(server.port, '127.0.0.1')
    let received = ''
    busy.setEncoding('latin1')
    busy.on('data', (chunk: string) => {
      received += chunk
    })
    for (const socket of [busy, idle]) socket.on('error', () => {})
    try {
      // A get, then a create whose body has not all arrived, in one write.
      busy.write(
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n` +
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      )
      while (!received.includes('\r\n\r\n[')) await sleep(5)
      await sleep(20) // the get's answer is out: the connection whose first answer came first is not idle
      await new Promise<void>((resolve) => {
        idle.once('data', () => resolve())
        idle.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
      })
      // A newcomer at the cap: room is made by closing the idle connection, never the busy one.
      const answer = await request(false, server.port, { path: '/v1/pets', headers: AUTH })
      assert.equal(answer.status, 200)
      await sleep(100)
      assert.deepEqual([busy.destroyed, idle.destroyed], [false, true])
      busy.write(body.slice(5))
      while (!received.includes('HTTP/1.1 201')) await sleep(5)
    } finally {
      busy.destroy()
      idle.destroy()
    }
  })

  test('serve(), cap 4: a keep-alive connection idle between requests makes room, the one idle the longest first', async () => {
    const server = await serveInProcess(KEY, { maxConnections: 4 })
    const kept: net.Socket[] = []
    for (let i = 0; i < 4; i++) {
      const socket = net.connect(server.port, '127.0.0.1')
      socket.on('error', () => {})
      await new Promise<void>((resolve) => {
        socket.once('data', () => resolve())
        socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
      })
      kept.push(socket)
      await sleep(20) // the first answered is the one idle the longest
    }
    try {
      const answer = await request(false, server.port, { path: '/v1/pets', headers: AUTH })
      assert.equal(answer.status, 200)
      await sleep(100)
      assert.deepEqual(
        kept.map((socket) => socket.destroyed),
        [true, false, false, false],
      )
    } finally {
      for (const socket of kept) socket.destroy()
    }
  })

  test('serve(), cap 4: a connection that asks again is idle from its new answer on; the oldest idle goes first', async () => {
    const server = await serveInProcess(KEY, { maxConnections: 4 })
    const ask = (socket: net.Socket) =>
      new Promise<void>((resolve) => {
        socket.once('data', () => resolve())
        socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
      })
    // A fresh connection (no request yet) and three kept-alive ones, idle in that order: fresh, a, b, c.
    const fresh = net.connect(server.port, '127.0.0.1')
    fresh.on('error', () => {})
    await new Promise<void>((resolve) => fresh.once('connect', () => resolve()))
    await sleep(20)
    const kept: net.Socket[] = []
    for (let i = 0; i < 3; i++) {
      const socket = net.connect(server.port, '127.0.0.1')
      socket.on('error', () => {})
      await ask(socket)
      kept.push(socket)
      await sleep(20)
    }
    const [a, b, c] = kept as [net.Socket, net.Socket, net.Socket]
    try {
      // a asks again, from the middle of the order to its end: fresh, b, c, a.
      await ask(a)
      await sleep(20)
      const newcomer = async () => {
        const answer = await request(false, server.port, { path: '/v1/pets', headers: AUTH })
        assert.equal(answer.status, 200)
        await sleep(100)
        return [fresh, a, b, c].map((socket) => socket.destroyed)
      }
      assert.deepEqual(await newcomer(), [true, false, false, false], 'the fresh connection, idle the longest')
      // The newcomer's client closed its connection: one more fills the cap again, idle the shortest.
      const last = net.connect(server.port, '127.0.0.1')
      last.on('error', () => {})
      kept.push(last)
      await new Promise<void>((resolve) => last.once('connect', () => resolve()))
      await sleep(20)
      assert.deepEqual(await newcomer(), [true, false, true, false], 'then b, not a, which asked again')
      assert.equal(last.destroyed, false)
    } finally {
      for (const socket of [fresh, ...kept]) socket.destroy()
    }
  })

  test('serve(): the first-request deadline spares a kept-alive connection; Node closes it at keepAliveTimeoutMs', async () => {
    const server = await serveInProcess(KEY, { firstRequestTimeoutMs: 300, keepAliveTimeoutMs: 1_500 })
    const socket = net.connect(server.port, '127.0.0.1')
    socket.on('error', () => {})
    const openedAt = performance.now()
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - openedAt)))
    await new Promise<void>((resolve) => {
      socket.once('data', () => resolve())
      socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
    })
    await sleep(800)
    assert.ok(!socket.destroyed, 'open 800 ms after its answer, past the 300 ms first-request deadline')
    const afterMs = await closed
    assert.ok(afterMs >= 1_400 && afterMs < 3_000, `closed after ${Math.round(afterMs)} ms`)
  })

  test('serve(): a request that arrived while the server was stalled past the first-request deadline is answered', async () => {
    // A long GC pause or a starved CPU: when the loop wakes, timers run before the reads that wait.
    const server = await serveInProcess(KEY, { firstRequestTimeoutMs: 100 })
    const accepted = new Promise<void>((resolve) => server.server.once('connection', () => resolve()))
    const socket = net.connect(server.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.setEncoding('latin1')
    let received = ''
    socket.on('data', (chunk: string) => {
      received += chunk
    })
    await accepted
    socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n\r\n`)
    // Both ends are in this process: the request sits in the server's receive buffer while nothing runs.
    const until = performance.now() + 400
    while (performance.now() < until) {}
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    assert.match(received, /^HTTP\/1\.1 200 /, `received ${JSON.stringify(received.slice(0, 40))}`)
  })

  test('the binary refuses connection limits that are not whole numbers', () => {
    for (const flag of ['--max-connections', '--max-connections-per-address', '--first-request-timeout']) {
      assert.throws(() => parseCli([flag, '1.5'], {}), UsageError)
      assert.throws(() => parseCli([flag, '-1'], {}), UsageError)
    }
    const options = parseCli(['--max-connections', '64', '--first-request-timeout', '0'], {})
    assert.equal(options.maxConnections, 64)
    assert.equal(options.firstRequestTimeoutMs, 0)
    assert.equal(parseCli([], {}).maxConnectionsPerAddress, undefined, "serve()'s default")
  })

  test('serve(): maxConnectionsPerAddress makes one address evict its own idle connections, not others', async () => {
    const server = await serveInProcess(KEY, { maxConnections: 64, maxConnectionsPerAddress: 16 })
    const own = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const socket = net.connect(server.port, '127.0.0.1', () => resolve(socket))
          }),
      ),
    )
    const flood = new Flood(server.port)
    await flood.open(100)
    try {
      // The server's evictions reach this client as closes a little later
      // (seen: 19 still open after a fixed 100 ms on Node 24). Wait for them;
      // a cap that did not evict still fails here, and 100 ms more shows that
      // nothing else is cut.
      for (const deadline = performance.now() + 5_000; flood.sockets.size > 16 && performance.now() < deadline; ) {
        await sleep(20)
      }
      await sleep(100)
      assert.equal(flood.sockets.size, 16, 'the attacker holds its 16')
      for (const socket of own) assert.ok(!socket.destroyed, 'the other address keeps its idle connections')
    } finally {
      flood.stop()
      for (const socket of own) socket.destroy()
    }
  })

  test('the binary, cap 1024: 2,000 idle sockets reopened every 10 s keep no one out (issue 17 item 5)', async (t) => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    const flood = new Flood(server.port)
    try {
      await flood.open(2_000)
      assertServed(t, await timeLegitimate(server.port, 100), 'past 2,000 sockets', FIRST_REQUEST_MS)
      // The attacker's 10 s are up (not waited for here): all 2,000 reconnect at once.
      await flood.reopen(2_000)
      assertServed(t, await timeLegitimate(server.port, 100), 'after they all reconnected', FIRST_REQUEST_MS)
    } finally {
      flood.stop()
      await server.stop()
    }
  })

  test('the binary: a slow loris on 200 connections gets its 408 at --first-request-timeout', async (t) => {
    const firstRequestTimeoutMs = 2_000
    const server = await startServer([
      ...['--port', '0', '--key', KEY, '--db', 'memory'],
      ...['--first-request-timeout', String(firstRequestTimeoutMs)],
    ])
    const flood = new Flood(server.port, { onOpen: slowLoris })
    try {
      await flood.open(200)
      assertServed(t, await timeLegitimate(server.port, 100, 15), 'while 200 slow clients drip', firstRequestTimeoutMs)
      while (flood.ended.length < 200 && flood.sockets.size > 0) await sleep(100)
      assert.equal(flood.ended.length, 200)
      for (const [i, ended] of flood.ended.entries()) {
        assert408(ended.received, `slow client ${i}`)
        assert.ok(ended.afterMs < 3_500, `slow client ${i} cut after ${Math.round(ended.afterMs)} ms`)
      }
    } finally {
      flood.stop()
      await server.stop()
    }
  })
})
