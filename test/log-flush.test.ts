/**
 * The access log's last lines on shutdown: lines are written in batches off
 * the event loop (bin/log-writer.ts), and SIGTERM / SIGINT must not lose the
 * batch still gathering or being written. Real process, real pipe.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, describe, it } from 'node:test'
import { killAll, startServer } from './helpers/spawn-server.js'

after(() => killAll())

const KEY = 'flush-key-81b2'

describe('access log on shutdown', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} while requests are in flight: every answered request has its line`, async () => {
      const server = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'json'])
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
      const answered: string[] = []
      let signalled = false
      const get = (i: number) =>
        new Promise<void>((resolve) => {
          const request = http.get(
            `${server.origin}/v1/pets?limit=5`,
            { agent, headers: { authorization: `Bearer ${KEY}`, 'x-request-id': `flush-${i}` } },
            (response) => {
              response.resume()
              response.on('end', () => {
                answered.push(String(response.headers['x-request-id']))
                // The signal goes out while most requests are still queued or in flight.
                if (answered.length === 100 && !signalled) {
                  signalled = true
                  server.child.kill(signal)
                }
                resolve()
              })
            },
          )
          // Requests the server no longer takes after the signal: refused or cut, not answered.
          request.on('error', () => resolve())
        })
      await Promise.all(Array.from({ length: 1500 }, (_, i) => get(i)))
      agent.destroy()
      const exited = await new Promise<number | null>((resolve) => {
        if (server.child.exitCode !== null) resolve(server.child.exitCode)
        else server.child.once('exit', (code) => resolve(code))
      })
      assert.equal(exited, 0)
      assert.ok(signalled && answered.length >= 100, `answered ${answered.length}`)
      const [, ...lines] = server.stdout().split('\n')
      const logged = new Set(lines.filter((line) => line !== '').map((line) => JSON.parse(line).reqId))
      const missing = answered.filter((id) => !logged.has(id))
      assert.deepEqual(missing, [], `${missing.length} of ${answered.length} answered requests have no log line`)
      assert.equal(logged.size, answered.length, 'one line per answered request, no more')
    })
  }
})
