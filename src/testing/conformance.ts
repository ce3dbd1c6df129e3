/**
 * `storeConformance`: registers the conformance tests with the caller's test
 * runner. It takes the runner's functions instead of importing one, so the
 * suite stays web-standard and works under node:test, vitest and the like.
 *
 * @module
 */
import type { PetStore } from '../store/store.js'
import { show } from './assert.js'
import { CASES, STORE_CONFORMANCE_TESTS, type StoreConformanceTest } from './cases.js'

/** What the suite needs to know about the store under test. */
export interface StoreConformanceOptions {
  /** Names the store in the report: the tests are grouped under `PetStore conformance: <name>`. */
  name: string
  /**
   * Makes a new, empty store; called once per test, and the store is closed
   * after it. Give each store its own database, file or table.
   */
  makeStore: () => PetStore | Promise<PetStore>
  /**
   * Tests this store does not pass, by name, each with the reason why (shown
   * by runners that show one, e.g. node:test). Unknown names and empty
   * reasons throw, so a skip cannot outlive the test it was for.
   */
  skip?: Partial<Record<StoreConformanceTest, string>>
  /** Time limit of each test in milliseconds. @default the runner's own (none for node:test, 5000 for vitest) */
  timeout?: number
}

/**
 * What the suite passes to `it`. `skip` is always the reason, a string, which
 * node:test prints and vitest takes as `true`; it is typed `string | boolean`
 * so that vitest's `it` (whose `skip` is a boolean) fits the runner type.
 */
export interface ConformanceTestOptions {
  skip?: string | boolean
  timeout?: number
}

/**
 * The test runner's functions, as it exports them. `describe` and `it` are
 * required; of the hooks only `after` (node:test) or `afterAll` (vitest) is
 * used, to close the stores of tests that timed out. `before`/`beforeAll`
 * are accepted so the runner's set can be passed as it is.
 */
export interface ConformanceRunner {
  // Method syntax on purpose: its parameters compare both ways, so the runners' own signatures (overloads,
  // generics, vitest's boolean `skip`) fit as they are. `| undefined` matches their optional `options`.
  describe(name: string, body: () => void): unknown
  it(name: string, options: ConformanceTestOptions | undefined, body: () => Promise<void>): unknown
  before?(hook: () => Promise<void>): unknown
  beforeAll?(hook: () => Promise<void>): unknown
  after?(hook: () => Promise<void>): unknown
  afterAll?(hook: () => Promise<void>): unknown
}

/** Throws a TypeError naming what is wrong with the arguments of `storeConformance`, before any test is registered. */
function validate(options: StoreConformanceOptions, runner: ConformanceRunner): void {
  const fail = (message: string): never => {
    throw new TypeError(`storeConformance: ${message}`)
  }
  if (typeof options !== 'object' || options === null) fail('the first argument must be { name, makeStore, skip? }')
  if (typeof options.name !== 'string' || options.name.trim() === '') fail('`name` must be a non-empty string')
  if (typeof options.makeStore !== 'function') fail('`makeStore` must be a function that returns a new store')
  if (options.timeout !== undefined && !(Number.isFinite(options.timeout) && options.timeout > 0)) {
    fail(`\`timeout\` must be a positive number of milliseconds, got ${show(options.timeout)}`)
  }
  const skip: unknown = options.skip ?? {}
  if (typeof skip !== 'object' || skip === null || Array.isArray(skip)) {
    fail('`skip` must be an object of { "test name": "reason" }')
  }
  for (const [name, reason] of Object.entries(skip as Record<string, unknown>)) {
    if (!(STORE_CONFORMANCE_TESTS as readonly string[]).includes(name)) {
      fail(
        `cannot skip ${show(name)}: there is no such test. The tests are:\n  ${STORE_CONFORMANCE_TESTS.join('\n  ')}`,
      )
    }
    if (typeof reason !== 'string' || reason.trim() === '') {
      fail(`skipping ${show(name)} needs a reason (a non-empty string), got ${show(reason)}`)
    }
  }
  if (typeof runner !== 'object' || runner === null) fail('the second argument must be the runner: { describe, it, … }')
  for (const key of ['describe', 'it'] as const) {
    if (typeof runner[key] !== 'function') fail(`the runner must have a \`${key}\` function, got ${show(runner[key])}`)
  }
}

/** Whether `value` has the methods every store must have. */
function isStore(value: unknown): value is PetStore {
  const store = value as Partial<PetStore> | null
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof store.create === 'function' &&
    typeof store.get === 'function' &&
    typeof store.list === 'function'
  )
}

/**
 * Registers the conformance tests of a store with your test runner: call it
 * at the top level of a test file. Each test gets a new store from
 * `makeStore` and closes it afterwards. Failures throw `Error`s with a
 * message naming the call and the difference.
 *
 * @example
 * ```ts
 * // Under node:test: the same call with `{ describe, it, before, after }` of that module.
 * import { afterAll, beforeAll, describe, it } from 'vitest'
 * import { memoryStore } from 'petstore-server'
 * import { storeConformance } from 'petstore-server/testing'
 *
 * storeConformance({ name: 'memoryStore', makeStore: () => memoryStore() }, { describe, it, beforeAll, afterAll })
 * storeConformance(
 *   { name: 'myStore', makeStore: () => myStore(), skip: { 'ping resolves': 'myStore has no health check yet' } },
 *   { describe, it, beforeAll, afterAll },
 * )
 * ```
 */
export function storeConformance(options: StoreConformanceOptions, runner: ConformanceRunner): void {
  validate(options, runner)
  const { name, makeStore, skip = {}, timeout } = options
  // Stores whose test has not finished with them. A runner abandons a test that times out without
  // stopping it, so its store is closed by the hook below, or its connections would keep the process alive.
  const open = new Set<PetStore>()

  /** Runs one test on a new store, then closes it; the test's own failure wins over a failure to close. */
  async function run(test: StoreConformanceTest): Promise<void> {
    const store = await makeStore()
    if (!isStore(store)) {
      throw new TypeError(`makeStore() must return a PetStore (create, get, list), got ${show(store)}`)
    }
    open.add(store)
    let failure: { error: unknown } | undefined
    try {
      // A store holding pets from elsewhere would fail the tests below confusingly; say so once, here.
      // A list() that throws is left to the tests to report. The ping test is spared: ping must be its first call.
      const leftover = test === 'ping resolves' ? [] : await store.list({ limit: 1 }).catch(() => [])
      if (Array.isArray(leftover) && leftover.length > 0) {
        throw new Error(
          `makeStore() must return a new, empty store; this one already holds ${show(leftover[0])}. ` +
            'Give each store its own database, file or table.',
        )
      }
      await CASES[test](store)
    } catch (error) {
      failure = { error }
    }
    open.delete(store)
    try {
      await store.close?.()
    } catch (error) {
      const message = error instanceof Error ? error.message : show(error)
      failure ??= { error: new Error(`close() rejected after the test: ${message}`, { cause: error }) }
    }
    if (failure) throw failure.error
  }

  runner.describe(`PetStore conformance: ${name}`, () => {
    const closeAbandoned = async () => {
      for (const store of open) {
        open.delete(store)
        // Best effort: the test that owned the store has already failed (timed out), which is the report.
        await store.close?.().catch(() => {})
      }
    }
    if (runner.after) runner.after(closeAbandoned)
    else runner.afterAll?.(closeAbandoned)
    for (const test of STORE_CONFORMANCE_TESTS) {
      const reason = (skip as Partial<Record<string, string>>)[test]
      const testOptions: ConformanceTestOptions =
        reason !== undefined ? { skip: reason } : timeout !== undefined ? { timeout } : {}
      runner.it(test, testOptions, () => run(test))
    }
  })
}
