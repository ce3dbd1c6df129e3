/**
 * The Node adapter's view of a request, and its abort signal, must be plain
 * V8 objects: fast properties, one hidden class request after request. When
 * the signal was an object literal with a getter, V8 made each one a
 * dictionary-mode object whose accessor pair lives in old space; that kept
 * each request's young objects alive through scavenges until a full
 * collection, and garbage collection took a quarter of the server's CPU
 * under load (see README → Performance). A benchmark shows that only as a
 * slower number; this test names it (and fails on the old code).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'

test('request views and their signals have fast properties and one hidden class, request after request', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', 'test/helpers/request-shape.ts'],
    { timeout: 30_000 },
  )
  const shape = { fast: true, oneMap: true }
  assert.deepEqual(JSON.parse(stdout), { requests: 3, request: shape, signal: shape })
})

test('SQLite pages keep fast properties and one hidden class once optimized', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', 'test/helpers/page-shape.ts'],
    { timeout: 30_000 },
  )
  assert.deepEqual(JSON.parse(stdout), { more: true, fast: true, oneMap: true })
})
