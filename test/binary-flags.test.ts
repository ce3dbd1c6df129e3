/**
 * Flags that test/cli.test.ts checks through `parseCli` only, observed on the
 * binary itself: `--max-connections` and `--max-connections-per-address` over
 * raw sockets (at the cap, the connection idle the longest is closed), and
 * `--no-docs` (no reference page). Deleting a flag's wiring fails here.
 *
 * Run: node --import tsx --test test/binary-flags.test.ts
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { openSocket, type RawSocket, request } from './helpers/raw-http.js'
import { killAll, startServer } from './helpers/spawn-server.js'

const KEY = 'flags-key'
after(killAll)

/** Opens sockets one by one (each accepted before the next), and says which of them the server has closed. */
async function closedOnes(port: number, count: number): Promise<number[]> {
  const sockets: RawSocket[] = []
  const closed = new Set<number>()
  for (let i = 0; i < count; i++) {
    const socket = await openSocket(port)
    socket.closed.then(() => closed.add(i))
    sockets.push(socket)
    // Accepted in order: the oldest is the one idle the longest.
    await sleep(300)
  }
  // The cap closes one at once; 5 s is generous on a loaded machine and well before Node's own
  // headers timeout (10 s from accept) would close the oldest anyway.
  for (let waited = 0; closed.size === 0 && waited < 5_000; waited += 100) await sleep(100)
  await sleep(300)
  for (const { socket } of sockets) socket.destroy()
  return [...closed].sort()
}

describe('connection caps on the binary', { concurrency: true, timeout: 60_000 }, () => {
  for (const flag of ['--max-connections', '--max-connections-per-address']) {
    it(`${flag} 2: a third connection closes the one idle the longest`, async () => {
      const server = await startServer(
        ['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'off', '--first-request-timeout', '60000'].concat([
          flag,
          '2',
        ]),
      )
      try {
        assert.deepEqual(await closedOnes(server.port, 3), [0])
      } finally {
        await server.stop('SIGKILL')
      }
    })
  }
})

it('--no-docs: /v1/docs is a 404 (with a key); without it, the page is served', { timeout: 60_000 }, async () => {
  const args = ['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'off']
  const [without, withDocs] = await Promise.all([startServer([...args, '--no-docs']), startServer(args)])
  try {
    const docs = (port: number) =>
      request(false, port, { path: '/v1/docs', headers: { authorization: `Bearer ${KEY}`, connection: 'close' } })
    assert.equal((await docs(without.port)).status, 404)
    assert.equal((await docs(withDocs.port)).status, 200)
  } finally {
    await Promise.all([without.stop('SIGKILL'), withDocs.stop('SIGKILL')])
  }
})
