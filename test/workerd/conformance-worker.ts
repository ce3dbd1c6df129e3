/**
 * A Worker that runs the store conformance suite on `d1Store(env.DB)` inside
 * workerd and answers the results as JSON: test/workerd.test.ts bundles it,
 * starts it beside the example Worker and asserts each result by name. The
 * runner is a tiny one of its own (workerd has no test runner): `describe`
 * and `it` collect, a request runs them one after another. `/schema`
 * answers the tables the migrations made, to compare with `sqliteStore`'s.
 */
import { type ConformanceRunner, storeConformance } from 'petstore-server/testing'
import { type D1Database, d1Store } from '../../src/store/sql/d1.js'

/** One test's outcome, as test/workerd.test.ts reads it. */
export interface WorkerTestResult {
  name: string
  outcome: 'pass' | 'fail' | 'skip'
  error?: string
  ms: number
}

interface Registered {
  name: string
  skip: string | boolean | undefined
  body: () => Promise<void>
}

/** Registers the suite on a collecting runner; `run()` runs what it collected. */
function collect(db: D1Database): () => Promise<WorkerTestResult[]> {
  const tests: Registered[] = []
  const afterHooks: Array<() => Promise<void>> = []
  let prefix = ''
  const runner: ConformanceRunner = {
    describe(name, body) {
      prefix = name
      body()
    },
    it(name, options, body) {
      tests.push({ name: `${prefix} > ${name}`, skip: options?.skip, body })
    },
    after(hook) {
      afterHooks.push(hook)
    },
  }
  // Each test gets a table of its own in the one database the binding gives.
  let tables = 0
  storeConformance({ name: 'd1Store', makeStore: () => d1Store(db, { table: `pets_${++tables}` }) }, runner)
  return async () => {
    const results: WorkerTestResult[] = []
    for (const test of tests) {
      const start = Date.now()
      if (test.skip) {
        results.push({ name: test.name, outcome: 'skip', error: String(test.skip), ms: 0 })
        continue
      }
      try {
        await test.body()
        results.push({ name: test.name, outcome: 'pass', ms: Date.now() - start })
      } catch (error) {
        const text = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error)
        results.push({ name: test.name, outcome: 'fail', error: text, ms: Date.now() - start })
      }
    }
    for (const hook of afterHooks) await hook()
    return results
  }
}

/** The SQL of the tables and index a new d1Store creates, as SQLite keeps it, to compare with sqliteStore's. */
async function schema(db: D1Database): Promise<unknown[]> {
  const store = d1Store(db)
  await store.ping?.()
  await store.close?.()
  const query = "select type, name, sql from sqlite_master where name like 'petstore_pets%' order by name"
  return (await db.prepare(query).all()).results
}

export default {
  async fetch(request: Request, env: { DB: D1Database }): Promise<Response> {
    // `/schema`: what the migrations made; anything else: the conformance suite.
    if (new URL(request.url).pathname === '/schema') return Response.json(await schema(env.DB))
    return Response.json(await collect(env.DB)())
  },
}
