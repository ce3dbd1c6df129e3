/**
 * Flags that test/cli.test.ts checks through `parseCli` only, observed on the
 * binary itself: `--max-connections` and `--max-connections-per-address` over
 * raw sockets (at the cap, the connection idle the longest is closed), and
 * `--no-docs` (no reference page). Deleting a flag's wiring fails here. Then
 * the environment variable every flag has: named in `--help` and the docs,
 * and acting as its flag.
 *
 * Run: node --import tsx --test test/binary-flags.test.ts
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { USAGE } from '../bin/usage.js'
import { openSocket, type RawSocket, request } from './helpers/raw-http.js'
import { killAll, repoRoot, runToExit, startServer } from './helpers/spawn-server.js'

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

describe('every flag has a PETSTORE_ variable', () => {
  it('--help and docs/binary.md name each one', () => {
    const binaryPage = readFileSync(join(repoRoot, 'docs/binary.md'), 'utf8')
    const flags = [...USAGE.matchAll(/^ {2}(?:-\w, )?--([a-z-]+)/gm)].map((match) => match[1] as string)
    assert.ok(flags.length > 20, `flags in --help: ${flags}`)
    for (const flag of flags) {
      if (flag === 'help' || flag === 'version') continue
      const name = `PETSTORE_${flag.toUpperCase().replaceAll('-', '_')}`
      assert.match(USAGE, new RegExp(`--${flag}\\b[^]*?\\(${name}\\b`), `--help gives ${name} for --${flag}`)
      assert.match(binaryPage, new RegExp(`^\\| \`--${flag}\\b[^|]*\\| \`${name}\\b`, 'm'), `binary.md: ${name}`)
    }
  })

  it('PETSTORE_TEST_CONTROL, PETSTORE_FAULTS and PETSTORE_FAULT_SEED act as their flags', {
    timeout: 60_000,
  }, async () => {
    const env = { PETSTORE_PORT: '0', PETSTORE_DB: 'memory', PETSTORE_KEY: KEY, PETSTORE_LOG: 'off' }
    const server = await startServer([], {
      ...env,
      PETSTORE_TEST_CONTROL: '1',
      PETSTORE_FAULTS: 'internal:1',
      PETSTORE_FAULT_SEED: '7',
    })
    // A flag wins over its variable.
    const flagged = await startServer(['--faults', 'unavailable:1'], { ...env, PETSTORE_FAULTS: 'internal:1' })
    try {
      const auth = { authorization: `Bearer ${KEY}`, connection: 'close' }
      const pets = await request(false, server.port, { path: '/v1/pets', headers: auth })
      assert.equal(pets.status, 500)
      assert.equal(pets.headers['petstore-fault'], 'internal')
      assert.doesNotMatch(server.stderr(), /faults drawn with/, 'the seed was given')
      const reset = await request(false, server.port, { method: 'POST', path: '/__petstore/reset', headers: auth })
      assert.equal(reset.status, 204)
      assert.equal((await request(false, flagged.port, { path: '/v1/pets', headers: auth })).status, 503)
    } finally {
      await Promise.all([server.stop('SIGKILL'), flagged.stop('SIGKILL')])
    }
  })

  it('a bad value is one line naming the variable', { timeout: 60_000 }, async () => {
    const env = { PETSTORE_PORT: '0', PETSTORE_DB: 'memory', PETSTORE_KEY: KEY }
    const cases: [Record<string, string>, string][] = [
      [{ PETSTORE_LATENCY: 'soon' }, 'PETSTORE_LATENCY must be MS or MIN-MAX'],
      [{ PETSTORE_TEST_CONTROL: 'yes' }, 'PETSTORE_TEST_CONTROL must be 1 or 0, got "yes"'],
      [{ PETSTORE_PORT: '99999' }, 'PETSTORE_PORT must be a port number from 0 to 65535, got "99999"'],
      [{ PETSTORE_CORS: ' , ' }, 'PETSTORE_CORS holds no origin: give origins separated by commas'],
    ]
    for (const [extra, says] of cases) {
      const { code, stderr } = await runToExit([], { ...env, ...extra })
      assert.equal(code, 1, stderr)
      assert.ok(stderr.startsWith(`petstore-server: ${says}`), stderr)
    }
  })
})
