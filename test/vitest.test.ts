/**
 * `petstore-server/testing` under vitest: runs test/vitest/ in a vitest
 * process and checks that every conformance test ran there, and the skipped
 * one was reported as skipped.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { STORE_CONFORMANCE_TESTS } from '../src/testing.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
const dir = mkdtempSync(join(tmpdir(), 'petstore-vitest-'))
after(() => rmSync(dir, { recursive: true, force: true }))

interface Report {
  success: boolean
  numPassedTests: number
  numFailedTests: number
  numPendingTests: number
  testResults: Array<{ assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string }> }>
}

it('the conformance suite runs under vitest, skips included', { timeout: 60_000 }, async () => {
  const output = join(dir, 'report.json')
  // Under `node --test` this variable makes any node child talk the runner's protocol on stdout.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const run = await promisify(execFile)(
    process.execPath,
    [vitest, 'run', '--dir', 'test/vitest', '--reporter=json', `--outputFile=${output}`],
    { cwd: root, env: { ...env, NO_COLOR: '1' } },
  ).catch((error: Error & { stdout?: string; stderr?: string }) => {
    assert.fail(`vitest failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`)
  })
  const report = JSON.parse(readFileSync(output, 'utf8')) as Report
  const count = STORE_CONFORMANCE_TESTS.length
  assert.equal(report.numFailedTests, 0, run.stderr)
  assert.equal(report.numPassedTests, 2 * count - 1)
  assert.equal(report.numPendingTests, 1)
  const skipped = report.testResults
    .flatMap((file) => file.assertionResults)
    .filter((test) => test.status !== 'passed')
    .map((test) => [...test.ancestorTitles, test.title].join(' > '))
  assert.deepEqual(skipped, ['PetStore conformance: memoryStore, one test skipped > ping resolves'])
  assert.equal(report.success, true)
})
