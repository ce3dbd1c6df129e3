/**
 * Every program in `examples/` runs as a user would run it and passes the
 * shared HTTP checks.
 */
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { checkServing, remote } from './helpers/http-checks.js'
import { killAll, startScript } from './helpers/spawn-server.js'

after(killAll)

describe('examples', { concurrency: true, timeout: 60_000 }, () => {
  test('examples/node.ts serves the API and stops on SIGTERM', async () => {
    const server = await startScript('examples/node.ts', [], { PORT: '0', PETSTORE_KEY: 'example-key' })
    try {
      await checkServing(remote(server.origin), '/v1', 'example-key')
    } finally {
      assert.deepEqual(await server.stop(), { code: 0, signal: null })
    }
  })
})
