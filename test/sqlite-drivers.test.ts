/**
 * `sqliteStore` on every SQLite driver: in this process with each driver
 * that loads here, and in child processes on the other runtimes it supports.
 *
 * Other runtimes are found through environment variables holding a binary's
 * path (`PETSTORE_TEST_NODE22`, `PETSTORE_TEST_NODE24`, `PETSTORE_TEST_BUN`).
 * Else Node 22 and 24 are looked up in npx's cache (`npx --offline`: warm it
 * once with `npx -y -p node@22 node -v` and `npx -y -p node@24 node -v`), and
 * Bun is installed on first use at its pinned version (test/helpers/on-demand.ts).
 * A runtime not found is skipped with the reason, except under CI, where it
 * fails (test/helpers/ci.ts).
 *
 * Run: node --import tsx --test test/sqlite-drivers.test.ts
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { createPetstore } from '../src/index.js'
import { PetstoreError } from '../src/shared/petstore-error.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import {
  AUTO_ORDER,
  loadSqliteDriver,
  nodeValues,
  returnsRows,
  type SqliteDriver,
} from '../src/store/sql/sqlite-drivers.js'
import { skipOrFail } from './helpers/ci.js'
import { type Located, locate, locateNpx } from './helpers/runtimes.js'
import { repoRoot } from './helpers/spawn-server.js'
import { sqliteRoundTrip } from './helpers/sqlite-roundtrip.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-sqlite-drivers-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Why each driver cannot be used in this process; absent when it can. */
const unavailable = new Map<SqliteDriver, string>()
/** Those of them that do not even load (what loadSqliteDriver falls through). */
const unloadable = new Set<SqliteDriver>()
for (const driver of AUTO_ORDER) {
  const loaded = await loadSqliteDriver([driver]).catch((error: Error) => {
    unloadable.add(driver)
    unavailable.set(driver, error.message)
  })
  // better-sqlite3 loads its addon at the first open: one built for another Node (22, 24 here) fails there.
  try {
    loaded?.open(':memory:').close()
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException
    unavailable.set(driver, `${driver} cannot open a database here (${code}): ${String(message).split('\n')[0]}`)
  }
}

interface Runtime {
  name: string
  /** Its binary and version, or why it is not here. */
  locate: () => Promise<Located>
  /** Arguments before the script: Node needs tsx, Bun runs TypeScript itself. */
  args: (version: string) => string[]
  drivers: string[]
  auto: SqliteDriver
}

/** node:sqlite exists from 22.5, behind a flag until 22.13. */
const nodeArgs = (version: string): string[] => {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number)
  return [...(major === 22 && minor < 13 ? ['--experimental-sqlite'] : []), '--import', 'tsx']
}

// better-sqlite3 is left out on the other runtimes: its addon here is built for this Node.
const RUNTIMES: Runtime[] = [
  {
    name: 'Node 22',
    locate: () => locateNpx('node@22', 'node', 'PETSTORE_TEST_NODE22'),
    args: nodeArgs,
    drivers: ['node:sqlite', 'auto'],
    auto: 'node:sqlite',
  },
  {
    name: 'Node 24',
    locate: () => locateNpx('node@24', 'node', 'PETSTORE_TEST_NODE24'),
    args: nodeArgs,
    drivers: ['node:sqlite', 'auto'],
    auto: 'node:sqlite',
  },
  {
    name: 'Bun',
    locate: () => locate('bun'),
    args: () => [],
    drivers: ['bun:sqlite', 'auto'],
    auto: 'bun:sqlite',
  },
]

// Looked up together, and before any test is declared: the runner starts the tests declared
// so far at the first await, and ends the file (its `after` hook included) when they are done.
const located = await Promise.all(RUNTIMES.map((runtime) => runtime.locate()))
describe(`sqliteStore on Node ${process.versions.node}`, () => {
  for (const driver of AUTO_ORDER) {
    it(`round trip with driver: '${driver}'`, { skip: unavailable.get(driver) ?? false }, async () => {
      await sqliteRoundTrip(mkdtempSync(join(dir, 'in-process-')), driver)
    })
  }

  it('the automatic choice is the first driver that loads, and works', async () => {
    const expected = AUTO_ORDER.find((driver) => !unavailable.has(driver))
    assert.equal((await loadSqliteDriver()).driver, expected)
    await sqliteRoundTrip(mkdtempSync(join(dir, 'in-process-')))
  })

  it('a forced driver that cannot load says which and why, at first use', async () => {
    const [missing] = unavailable.keys()
    if (!missing) return
    const store = sqliteStore({ path: ':memory:', driver: missing })
    const error = await store.create({ name: 'Rex', categoryId: 1 }).then(
      () => undefined,
      (error: unknown) => error,
    )
    assert.ok(error instanceof PetstoreError)
    assert.equal(error.status, 500)
    assert.match(error.message, new RegExp(`^sqliteStore cannot load the driver ${missing}: `))
    await store.close?.()
  })

  it('over HTTP, a driver that cannot load is a generic 500; what to install goes to onError, not to the client', async () => {
    const [missing] = unavailable.keys()
    if (!missing) return
    const store = sqliteStore({ path: ':memory:', driver: missing })
    const told: unknown[] = []
    const handler = createPetstore({ store, keys: ['k'], onError: (error) => told.push(error) })
    const answer = await handler(new Request('http://x/v1/pets', { headers: { authorization: 'Bearer k' } }))
    assert.equal(answer.status, 500)
    assert.deepEqual(await answer.json(), {
      code: 'internal_error',
      message: 'The server failed to answer this request',
      status: 500,
    })
    assert.match(String((told[0] as Error)?.message), new RegExp(`^sqliteStore cannot load the driver ${missing}: `))
    await store.close?.()
  })

  it('no loadable driver at all: one message naming the fix', async (t) => {
    const missing = [...unloadable]
    if (missing.length < 2) return t.skip('fewer than two drivers fail to load here')
    await assert.rejects(loadSqliteDriver(missing), {
      name: 'PetstoreError',
      message: 'sqliteStore needs a SQLite driver: npm install better-sqlite3 (or run on Node ≥ 22.13 or Bun)',
    })
  })

  it('an unknown driver is refused when the store is made', () => {
    assert.throws(() => sqliteStore({ path: ':memory:', driver: 'sqlite3' as SqliteDriver }), {
      name: 'TypeError',
      message: /unknown driver "sqlite3"; use one of 'better-sqlite3', 'node:sqlite', 'bun:sqlite'/,
    })
  })

  it('node:sqlite without setReturnArrays (older Node 22): rows are read as values all the same', async (t) => {
    if (unavailable.has('node:sqlite')) return t.skip(unavailable.get('node:sqlite'))
    const { DatabaseSync } = await import('node:sqlite' as string)
    const database = new DatabaseSync(':memory:')
    try {
      const statement = database.prepare('select ? as b, ? as a union all select 3, null')
      // The statement as such a Node has it: the same reads, none for arrays.
      const older = { get: statement.get.bind(statement), all: statement.all.bind(statement) }
      const values = nodeValues(older)
      assert.deepStrictEqual(values.get([2, 1]), [2, 1])
      assert.deepStrictEqual(values.all([2, 1]), [
        [2, 1],
        [3, null],
      ])
      const none = database.prepare('select 1 where 0')
      assert.equal(nodeValues({ get: none.get.bind(none), all: none.all.bind(none) }).get([]), undefined)
    } finally {
      database.close()
    }
  })

  it('without columns() (node:sqlite before 22.16), rows-returning SQL is told by its text', () => {
    const rows = [
      'select "id" from "petstore_pets" where "id" > ? order by "id" limit ?',
      '  -- a comment\n  SELECT 1',
      '/* x */ with recursive n(i) as (values(1)) select i from n',
      'pragma journal_mode = WAL',
      'insert into "petstore_pets" ("name") values (?) returning "id", "name"',
      '(select 1) union (select 2)',
    ]
    const writes = [
      'insert into "petstore_pets" ("name") values (?)',
      'create table if not exists "petstore_pets" ("id" integer primary key autoincrement)',
      'begin',
      'update "t" set "a" = ?',
    ]
    for (const sql of rows) assert.equal(returnsRows(sql), true, sql)
    for (const sql of writes) assert.equal(returnsRows(sql), false, sql)
  })
})

const run = promisify(execFile)
const script = join(repoRoot, 'test/helpers/sqlite-runtime.ts')

describe('sqliteStore on other runtimes', { concurrency: true }, () => {
  for (const [index, runtime] of RUNTIMES.entries()) {
    const found = located[index]!
    const title = `${runtime.name}${'version' in found ? ` (${found.version})` : ''}: ${runtime.drivers.join(', ')}`
    // .ci/run puts these runtimes in their caches first: under CI, one not found fails.
    it(title, { skip: skipOrFail('skip' in found ? found.skip : false), timeout: 60_000 }, async () => {
      if (!('binary' in found)) return
      const { NODE_TEST_CONTEXT: _, NODE_OPTIONS: __, ...env } = process.env
      const { stdout } = await run(
        found.binary,
        [...runtime.args(found.version), script, mkdtempSync(join(dir, 'child-')), ...runtime.drivers],
        { cwd: repoRoot, env, timeout: 50_000 },
      ).catch((error: { stderr?: string; message: string }) => {
        throw new Error(`${runtime.name} failed:\n${error.stderr || error.message}`)
      })
      assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop() ?? ''), { auto: runtime.auto })
    })
  }
})

describe('sqliteStore: processes opening one new file together', () => {
  // SQLite has no migration lock: stores migrating one new file at the same moment
  // may both record migration 0001, and the loser must retry rather than fail.
  for (const driver of AUTO_ORDER.filter((each) => !unavailable.has(each))) {
    it(`all of several stores migrate and serve (${driver})`, async () => {
      for (let round = 0; round < 20; round++) {
        const path = join(dir, `race-${driver.replace(/\W/g, '')}-${round}.db`)
        const stores = Array.from({ length: 4 }, () => sqliteStore({ path, driver }))
        try {
          await Promise.all(stores.map((store) => store.ping?.()))
          const pets = await Promise.all(stores.map((store, i) => store.create({ name: `p${i}`, categoryId: i })))
          assert.equal(new Set(pets.map((pet) => pet.id)).size, 4)
        } finally {
          await Promise.all(stores.map((store) => store.close?.()))
        }
      }
    })
  }
})
