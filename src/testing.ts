/**
 * `petstore-server/testing`: the store conformance suite, and test control.
 * One call proves that a `PetStore` (one of ours or your own) keeps the
 * contract the HTTP API relies on, under node:test, vitest or any runner
 * with `describe` and `it(name, options, fn)`. It imports no runner and no
 * Node module. `seed()` loads pets into a store; `withFaults()` makes a
 * handler fail on purpose, replayably; `withJournal()` records what a client
 * sent into a bounded {@link Journal} (see "Testing your client",
 * https://github.com/petstore-server/petstore-server/blob/main/docs/testing-clients.md:
 * the package ships no docs/).
 *
 * @example
 * ```ts
 * // my-store.test.ts, under vitest. Under node:test, pass `{ describe, it, before, after }` of that module.
 * import { afterAll, beforeAll, describe, it } from 'vitest'
 * import { storeConformance } from 'petstore-server/testing'
 *
 * storeConformance({ name: 'myStore', makeStore: () => myStore() }, { describe, it, beforeAll, afterAll })
 * ```
 *
 * @module
 */
export { ConformanceError } from './testing/assert.js'
export { STORE_CONFORMANCE_TESTS, type StoreConformanceTest } from './testing/cases.js'
export {
  type ConformanceRunner,
  type ConformanceTestOptions,
  type StoreConformanceOptions,
  storeConformance,
} from './testing/conformance.js'
export { type FaultKind, type FaultOptions, withFaults } from './testing/faults.js'
export {
  DEFAULT_BODY_BYTES,
  DEFAULT_JOURNAL_SIZE,
  type FilterProblem,
  Journal,
  type JournalCount,
  type JournalEntry,
  type JournalFilter,
  type JournalOptions,
  type JournalPage,
  type JournalPart,
  type JournalReader,
  MAX_JOURNAL_SIZE,
  mergeParts,
  parseJournalQuery,
} from './testing/journal.js'
export { type WithJournalOptions, withJournal } from './testing/journal-handler.js'
export { type NamespacedPetstoreOptions, namespacedPetstore } from './testing/namespaces.js'
export { type SeedPet, seed } from './testing/seed.js'
