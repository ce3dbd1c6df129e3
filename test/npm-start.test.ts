/**
 * `npm start`, the clone's way to run the server (the README's quick start): it runs the
 * built binary at once, and SIGTERM sent to npm reaches the server, which then frees its
 * port. Through `npx petstore-server` it does not: npm runs the binary under `sh -c`, which
 * does not pass the signal on, so the script `exec`s node in the shell's place.
 *
 * It runs dist/: `npm run build` first (CI does).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { it } from 'node:test'
import { repoRoot } from './helpers/spawn-server.js'

it('SIGTERM sent to `npm start` stops the server and frees its port', { timeout: 60_000 }, async () => {
  assert.ok(existsSync(join(repoRoot, 'dist/bin/petstore-server.js')), 'no dist/: run npm run build first')
  const { PORT: _port, PETSTORE_API_KEYS: _keys, DATABASE_URL: _db, NODE_TEST_CONTEXT: _context, ...env } = process.env
  const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--db', 'memory', '--key', 'k', '--log', 'off'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: a server that outlived npm is still in it, and the end of the test kills it.
    detached: true,
  })
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  try {
    let out = ''
    const url = await new Promise<string>((resolve, reject) => {
      npm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        const ready = /listening on (http:\/\/\S+)/.exec(out)
        if (ready?.[1]) resolve(ready[1])
      })
      npm.once('exit', (code) => reject(new Error(`npm start exited ${code} before it was ready: ${out}`)))
    })
    const listed = await fetch(`${url}/pets`, { headers: { authorization: 'Bearer k' } })
    assert.equal(listed.status, 200)
    npm.kill('SIGTERM')
    assert.equal(await exited, 0, 'npm start exits 0 once the server has')
    await assert.rejects(fetch(`${url}/pets`), 'nothing listens on the port any more')
  } finally {
    try {
      process.kill(-(npm.pid ?? 0), 'SIGKILL')
    } catch {
      // Every process of the group has exited.
    }
  }
})
