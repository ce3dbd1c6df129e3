/**
 * `--workers 2`: how the primary replaces workers, on the binary itself.
 * The backoff between restarts doubles, stops at its cap, and starts over
 * after a worker that lived; replacements keep the port of `--port 0`, even
 * when every worker died at once; a second SIGTERM kills at once (exit 1);
 * a SIGHUP that reloads keys while workers start waits for them; a worker
 * that cannot start before the first ready line ends the server.
 *
 * Workers are killed with SIGKILL from here. The one that cannot start is
 * made by a preload in NODE_OPTIONS that exits in cluster workers only: the
 * binary has no flag for it.
 *
 * Run: node --import tsx --test test/worker-respawn.test.ts
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { connectError, openSocket, request } from './helpers/raw-http.js'
import { killAll, type RunningServer, readyPids, runToExit, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'respawn-key'
const dir = mkdtempSync(join(tmpdir(), 'petstore-respawn-'))

after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** The waits the primary announced before each restart, in order. */
const delays = (stderr: string) =>
  [...stderr.matchAll(/died \(signal SIGKILL\); starting another in (\d+) ms/g)].map((match) => Number(match[1]))

/** Workers start through tsx, several at once: 40 s for what they say. */
const waitFor = (condition: () => boolean, what: string) => until(condition, what, 40_000)

const get = (server: RunningServer) =>
  request(false, server.port, {
    path: '/v1/pets',
    headers: { authorization: `Bearer ${KEY}`, connection: 'close' },
  })

describe('--workers 2 --port 0: restarts', { concurrency: 1, timeout: 180_000 }, () => {
  let server: RunningServer
  before(async () => {
    server = await startServer(['--workers', '2', '--port', '0', '--key', KEY, '--db', `sqlite:${join(dir, 'a.db')}`])
    await waitFor(() => readyPids(server.stderr()).length === 2, 'two workers ready')
  })
  after(() => server.stop('SIGKILL').catch(() => undefined))

  test('the backoff doubles from 250 ms to its cap of 4 s, and starts over after a worker that lived 10 s', async () => {
    const [, elder] = readyPids(server.stderr()) as [number, number]
    // Each replacement is killed as soon as it is ready: six quick deaths in a row.
    let newest = readyPids(server.stderr())[0]!
    for (let kill = 1; kill <= 6; kill++) {
      process.kill(newest, 'SIGKILL')
      await waitFor(() => readyPids(server.stderr()).length === 2 + kill, `replacement ${kill} ready`)
      newest = readyPids(server.stderr()).at(-1)!
    }
    assert.deepEqual(delays(server.stderr()), [250, 500, 1000, 2000, 4000, 4000], server.stderr())
    // The other first worker has lived through those 11.75 s of waits: its death is no crash loop.
    process.kill(elder, 'SIGKILL')
    await waitFor(() => readyPids(server.stderr()).length === 9, 'the elder replaced')
    assert.equal(delays(server.stderr()).at(-1), 250, server.stderr())
    assert.equal((await get(server)).status, 200)
  })

  test('every worker killed at once: the replacements serve the announced port', async () => {
    const before = readyPids(server.stderr()).length
    for (const pid of readyPids(server.stderr()).slice(-2)) process.kill(pid, 'SIGKILL')
    await waitFor(() => readyPids(server.stderr()).length === before + 2, 'two replacements ready')
    assert.equal(await connectError(server.port), undefined, `port ${server.port} accepts again`)
    assert.equal((await get(server)).status, 200)
  })

  test('a second SIGTERM while a request holds a worker: the workers are killed, exit 1', async () => {
    // A create whose body never comes: the worker that has it waits for it (up to 10 s) before it stops.
    const held = await openSocket(server.port)
    held.socket.write(
      `POST /v1/pets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\n` +
        'content-length: 40\r\nexpect: 100-continue\r\n\r\n',
    )
    await waitFor(() => held.received().startsWith('HTTP/1.1 100 Continue'), 'the worker reads the body')
    const exit = new Promise<number | null>((resolve) => server.child.once('exit', resolve))
    server.child.kill('SIGTERM')
    await waitFor(() => server.stderr().includes('SIGTERM, stopping'), 'the primary stops its workers')
    server.child.kill('SIGTERM')
    assert.equal(await exit, 1, server.stderr())
    assert.match(server.stderr(), /SIGTERM again, killing the workers\n/)
    held.socket.destroy()
  })
})

test('SIGHUP while the workers start: none dies, each re-reads its keys once ready', { timeout: 60_000 }, async () => {
  const keysFile = join(dir, 'keys')
  writeFileSync(keysFile, `${KEY}\n`)
  let stderr = ''
  let child: ChildProcess | undefined
  const starting = startServer(
    ['--workers', '2', '--port', '0', '--keys-file', keysFile, '--db', `sqlite:${join(dir, 'b.db')}`],
    {},
    (spawned) => {
      child = spawned
      spawned.stderr?.on('data', (chunk: string) => {
        stderr += chunk
      })
    },
  )
  await waitFor(() => stderr.includes('starting 2 workers'), 'the primary forks its workers')
  child?.kill('SIGHUP')
  const server = await starting
  try {
    assert.match(server.stderr(), /SIGHUP, telling 0 workers to re-read their keys, 2 more once ready\n/)
    await waitFor(
      () => (server.stderr().match(/SIGHUP: 1 key\(s\) in use/g)?.length ?? 0) === 2,
      'both workers re-read the keys once ready',
    )
    assert.doesNotMatch(server.stderr(), /died|giving up/)
    assert.equal((await get(server)).status, 200)
  } finally {
    await server.stop('SIGKILL').catch(() => undefined)
  }
})

test('a worker that cannot start before the first ready line: the server gives up, exit 1', {
  timeout: 60_000,
}, async () => {
  const preload = join(dir, 'fail-in-workers.cjs')
  writeFileSync(preload, "if (require('node:cluster').isWorker) process.exit(3)\n")
  const run = await runToExit(['--workers', '2', '--port', '0', '--key', KEY, '--db', `sqlite:${join(dir, 'c.db')}`], {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`,
  })
  assert.equal(run.code, 1, run.stderr)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, /worker \d exited before it was ready \(exit code 3\); giving up\n/)
})
