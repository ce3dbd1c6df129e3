/**
 * The conformance suite under vitest, as a user of `petstore-server/testing`
 * runs it there; test/vitest.test.ts runs this file and checks the outcome.
 */
import { afterAll, beforeAll, describe, it } from 'vitest'
import { memoryStore } from '../../src/index.js'
import { storeConformance } from '../../src/testing.js'

storeConformance({ name: 'memoryStore', makeStore: () => memoryStore() }, { describe, it, beforeAll, afterAll })

// A skip must reach vitest as a skipped test, not as a pass or a failure.
storeConformance(
  { name: 'memoryStore, one test skipped', makeStore: () => memoryStore(), skip: { 'ping resolves': 'proves skips' } },
  { describe, it, beforeAll, afterAll },
)
