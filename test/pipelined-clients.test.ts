/**
 * A client that pipelines many requests in one write and never reads the
 * answers must not grow the server's memory without bound: a pipelined
 * request is answered only once the answer before it is written, and a
 * connection whose answer waits unread past `writeTimeoutMs` (10 s in the
 * binary) is closed. On the binary, over raw sockets, on memory and SQLite.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { memoryMiB } from './helpers/raw-http.js'
import { killAll, startServer } from './helpers/spawn-server.js'

const KEY = 'pipelined-key'
const dir = mkdtempSync(join(tmpdir(), 'petstore-pipelined-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

const PAGE = `GET /v1/pets?limit=100&status=sold HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`

for (const [name, db] of [
  ['memory', 'memory'],
  ['SQLite', `sqlite:${join(dir, 'pets.db')}`],
] as const) {
  describe(`pipelined clients that never read, on ${name}`, { timeout: 90_000 }, () => {
    it('hold little memory, and are disconnected once their answers wait too long', async (t) => {
      const server = await startServer(['--port', '0', '--key', KEY, '--db', db, '--log', 'off'])
      const pid = server.child.pid as number
      // 100 pets of 250 emoji each: a page of them is about 100 KB of JSON.
      const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
      for (let i = 0; i < 100; i++) {
        const body = JSON.stringify({ name: '🐶'.repeat(250), categoryId: i, status: 'sold' })
        const res = await fetch(`${server.url}/pets`, { method: 'POST', headers, body })
        assert.equal(res.status, 201)
      }
      for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/pets?limit=100&status=sold`, { headers })).text()
      const before = memoryMiB(pid).rss

      // Four sockets, each 800 requests in one write, and nothing read.
      const sockets = await Promise.all(
        Array.from(
          { length: 4 },
          () =>
            new Promise<net.Socket>((resolve) => {
              const socket = net.connect(server.port, server.host, () => resolve(socket))
              socket.on('error', () => {})
            }),
        ),
      )
      const started = Date.now()
      for (const socket of sockets) {
        socket.pause()
        socket.write(PAGE.repeat(800))
      }
      // The write timeout (10 s) and a margin, sampling the server's memory meanwhile.
      let peak = before
      while (Date.now() - started < 14_000) {
        peak = Math.max(peak, memoryMiB(pid).rss)
        await sleep(200)
      }
      // A paused socket sees no end: reading now, each must end soon, long before its 800 answers.
      const read = await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<{ bytes: number; ended: boolean }>((resolve) => {
              let bytes = 0
              const done = (ended: boolean) => resolve({ bytes, ended })
              const timer = setTimeout(() => done(false), 5_000)
              socket.on('data', (chunk: Buffer) => {
                bytes += chunk.length
              })
              socket.once('close', () => {
                clearTimeout(timer)
                done(true)
              })
              socket.resume()
            }),
        ),
      )
      t.diagnostic(
        `RSS ${before.toFixed(1)} → peak ${peak.toFixed(1)} MiB; read after the stall: ${read.map((r) => `${(r.bytes / 2 ** 20).toFixed(1)} MiB`).join(', ')}`,
      )
      assert.ok(peak - before <= 96, `RSS grew by ${(peak - before).toFixed(1)} MiB`)
      for (const { bytes, ended } of read) {
        assert.ok(ended, 'the server closed the stalled connection')
        // 800 answers of a 100 KB page would be 80 MB.
        assert.ok(bytes < 20 * 2 ** 20, `${bytes} bytes were still sent`)
      }
      for (const socket of sockets) socket.destroy()
      // Still serving.
      assert.equal((await fetch(`${server.url}/pets?limit=1`, { headers })).status, 200)
      await server.stop('SIGTERM')
    })
  })
}
