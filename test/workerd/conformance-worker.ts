/**
 * A Worker that runs the store conformance suite on `d1Store(env.DB)` inside
 * workerd and answers the results as JSON: test/workerd.test.ts bundles it,
 * starts it beside the example Worker and asserts each result by name. The
 * runner is a tiny one of its own (workerd has no test runner): `describe`
 * and `it` collect, a request runs them one after another. `/schema`
 * answers the tables the migrations made, to compare with `sqliteStore`'s. `/keyed/N/TTL/v1/…`
 * is the API on `d1Store` table `keyed_N`, keys kept TTL ms, `Prefer: fault=…` honoured: the
 * Idempotency-Key suite (test/idempotency.suite.ts) runs over it. `/upgrade` opens tables as an
 * earlier d1Store left them (no record of their migrations), and two stores migrating at once.
 */
import { createPetstore, type FetchHandler } from 'petstore-server'
import { type ConformanceRunner, storeConformance, withFaults } from 'petstore-server/testing'
import { type D1Database, d1Store } from '../../src/store/sql/d1.js'
import { sqliteMigrations } from '../../src/store/sql/schema-history.js'

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

/** The migrations recorded for `table`. */
async function recorded(db: D1Database, table: string): Promise<string[]> {
  const { results } = await db.prepare(`select name from ${table}_migration order by name`).all<{ name: string }>()
  return results.map((row) => row.name)
}

/**
 * Tables an earlier d1Store made (every statement of the migrations, and no record of them) with a
 * pet in them, then a store on them; and two stores on new tables, migrating at once.
 */
async function upgrade(db: D1Database): Promise<unknown> {
  const statements = Object.values(sqliteMigrations({ table: 'old_pets', schema: undefined })).flat()
  await db.batch(statements.map((statement) => db.prepare(statement)))
  await db.prepare(`insert into old_pets (name, category_id) values ('Rex', 1)`).run()
  const old = d1Store(db, { table: 'old_pets' })
  const kept = await old.get(1)
  const created = await old.create({ name: 'Tom', categoryId: 2 })
  const [first, second] = [d1Store(db, { table: 'together' }), d1Store(db, { table: 'together' })]
  await Promise.all([first.ping?.(), second.ping?.()])
  const both = await Promise.all([
    first.create({ name: 'A', categoryId: 1 }),
    second.create({ name: 'B', categoryId: 1 }),
  ])
  return {
    kept,
    created,
    old: await recorded(db, 'old_pets'),
    together: await recorded(db, 'together'),
    ids: both.map((pet) => pet.id).sort(),
  }
}

/** The keyed handlers, by `N/TTL`: one per table, made on its first request. */
const keyed = new Map<string, FetchHandler>()

function keyedHandler(db: D1Database, table: string, ttl: string): FetchHandler {
  let handler = keyed.get(`${table}/${ttl}`)
  if (handler === undefined) {
    const api = createPetstore({
      store: d1Store(db, { table: `keyed_${table}` }),
      keys: ['first-key', 'second-key'],
      basePath: `/keyed/${table}/${ttl}/v1`,
      idempotencyTtl: Number(ttl),
    })
    handler = withFaults(api, { prefer: true })
    keyed.set(`${table}/${ttl}`, handler)
  }
  return handler
}

export default {
  async fetch(request: Request, env: { DB: D1Database }): Promise<Response> {
    const { pathname } = new URL(request.url)
    const keyedPath = /^\/keyed\/(\d+)\/(\d+)\//.exec(pathname)
    if (keyedPath) return keyedHandler(env.DB, keyedPath[1] as string, keyedPath[2] as string)(request)
    // `/schema`: what the migrations made; `/upgrade`: see upgrade(); anything else: the conformance suite.
    if (pathname === '/schema') return Response.json(await schema(env.DB))
    if (pathname === '/upgrade') return Response.json(await upgrade(env.DB))
    return Response.json(await collect(env.DB)())
  },
}
