/**
 * Property-based fuzzing of the handler (see test/fuzz/): a fixed seed and a
 * few thousand hostile requests per store here; `npm run fuzz` runs many more
 * with a random seed. Also the hostile bodies that need more room than the
 * fuzz gives them: JSON nested 100,000 and 1,000,000 deep.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createPetstore, memoryStore } from '../src/index.js'
import { formatStatuses, runCampaign } from './fuzz/campaign.js'
import type { StoreKind } from './fuzz/property.js'
import { assertError, call, KEY } from './helpers/client.js'

const SEED = 20261122
const RUNS = 3000

const dir = mkdtempSync(join(tmpdir(), 'petstore-fuzz-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** A late rejection that nobody handles would crash a server: none may happen while fuzzing. */
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
process.on('unhandledRejection', onUnhandled)
after(() => {
  process.off('unhandledRejection', onUnhandled)
})

describe('fuzzing the handler', () => {
  for (const kind of ['memory', 'sqlite'] as StoreKind[]) {
    it(`answers ${RUNS} hostile requests on ${kind} as the spec says (seed ${SEED})`, async (t) => {
      const result = await runCampaign({ kind, runs: RUNS, seed: SEED, dir })
      t.diagnostic(`${result.requests} requests, ${result.creates} creates in ${Math.round(result.ms)} ms`)
      t.diagnostic(formatStatuses(result.statuses))
      assert.equal(result.failure, undefined, result.failure)
      // The fuzz reaches every answer, not only the early ones (401, 404).
      for (const status of [200, 201, 400, 401, 404, 405, 413, 415, 503]) {
        assert.ok(result.statuses.has(status), `no ${status} in ${formatStatuses(result.statuses)}`)
      }
      assert.deepEqual(unhandled, [])
    })
  }
})

describe('deeply nested JSON', () => {
  const handler = createPetstore({ store: memoryStore(), keys: [KEY], maxBodyBytes: 4 * 1024 * 1024 })
  const post = (body: string) =>
    call(handler, '/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body })

  for (const depth of [100_000, 1_000_000]) {
    it(`refuses arrays and objects nested ${depth} deep with a 400, without a stack overflow`, async () => {
      assertError(await post(`${'['.repeat(depth)}${']'.repeat(depth)}`), 400, 'validation_error')
      assertError(await post(`${'{"a":'.repeat(depth / 10)}1${'}'.repeat(depth / 10)}`), 400, 'validation_error')
      assertError(await post('['.repeat(depth)), 400, 'invalid_json')
    })
  }

  it('drops a deeply nested property it ignores, without walking it', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    const answer = await post(`{"name":"Deep","categoryId":1,"extra":${deep}}`)
    assert.equal(answer.status, 201, answer.text)
    assert.deepEqual(answer.body, { id: answer.body.id, name: 'Deep', categoryId: 1 })
  })
})
