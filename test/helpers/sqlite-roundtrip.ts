/**
 * One round trip through `sqliteStore` on one driver, asserting as it goes:
 * used in-process by test/sqlite-drivers.test.ts and, through
 * sqlite-runtime.ts, on other runtimes (so nothing here may need Node ≥ 22
 * or Node-only APIs beyond node:assert and node:path, which Bun has too).
 *
 * @module
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { sqliteStore } from '../../src/store/sql/sqlite.js'
import { loadSqliteDriver, type SqliteDriver } from '../../src/store/sql/sqlite-drivers.js'
import { assertJsonPagesMatchList, createHardPets } from './json-page.js'

const MAX = 2 ** 53 - 1

/** The adapter itself: plain rows, `reader` for rows-returning statements, run() results, rows as values. */
async function adapterChecks(driver: SqliteDriver | undefined): Promise<void> {
  const { open } = await loadSqliteDriver(driver ? [driver] : undefined)
  const database = open(':memory:')
  try {
    const select = database.prepare('select 1 as one, ? as two')
    assert.equal(select.reader, true)
    assert.deepStrictEqual(select.all([2]), [{ one: 1, two: 2 }], 'rows are plain objects')
    const create = database.prepare('create table t (id integer primary key, x text)')
    assert.equal(create.reader, false)
    create.run([])
    const insert = database.prepare('insert into t (x) values (?)')
    assert.equal(insert.reader, false)
    const { changes, lastInsertRowid } = insert.run(['a'])
    assert.deepEqual([Number(changes), Number(lastInsertRowid)], [1, 1])
    const returning = database.prepare('insert into t (x) values (?) returning id')
    assert.equal(returning.reader, true)
    assert.deepStrictEqual(returning.all(['b']), [{ id: 2 }])
    assert.deepStrictEqual([...database.prepare('select x from t where id > ?').iterate([0])], [{ x: 'a' }, { x: 'b' }])
    // The hot path's queries: rows as arrays of values, in the order selected.
    const values = database.prepareValues('select x, id, null as none from t where id > ? order by id')
    assert.deepStrictEqual(values.get([1]), ['b', 2, null])
    assert.equal(values.get([2]), undefined)
    assert.deepStrictEqual(values.all([0]), [
      ['a', 1, null],
      ['b', 2, null],
    ])
    assert.deepStrictEqual(values.all([2]), [])
  } finally {
    database.close()
  }
}

/** The journal mode of the file at `path`, read through the same driver. */
async function journalMode(path: string, driver: SqliteDriver | undefined): Promise<unknown> {
  const { open } = await loadSqliteDriver(driver ? [driver] : undefined)
  const database = open(path)
  try {
    return (database.prepare('pragma journal_mode').all([])[0] as { journal_mode: unknown }).journal_mode
  } finally {
    database.close()
  }
}

/**
 * Creates, reads and lists pets in a new file under `dir` with `driver`
 * (`undefined`: the automatic choice), checks WAL mode, reopens the file,
 * and does the same in `:memory:`, where it also compares the pages SQLite
 * writes as JSON with `list()`. Throws an AssertionError on any difference.
 *
 * @example
 * ```ts
 * await sqliteRoundTrip(mkdtempSync(join(tmpdir(), 'x-')), 'node:sqlite')
 * ```
 */
export async function sqliteRoundTrip(dir: string, driver?: SqliteDriver): Promise<void> {
  await adapterChecks(driver)
  const path = join(dir, `${(driver ?? 'auto').replace(':', '-')}.db`)

  const store = sqliteStore({ path, driver })
  const rex = await store.create({ name: 'Rex', categoryId: 1, status: 'available' })
  const tom = await store.create({ name: 'Tom', categoryId: -MAX })
  const ada = await store.create({ name: 'Ada', categoryId: MAX, status: 'available' })
  const sue = await store.create({ name: 'Sue', categoryId: 3, status: 'sold' })
  try {
    assert.deepStrictEqual(rex, { id: rex.id, name: 'Rex', categoryId: 1, status: 'available' })
    assert.deepStrictEqual(tom, { id: tom.id, name: 'Tom', categoryId: -MAX }, 'no status key without a status')
    assert.ok(Number.isSafeInteger(rex.id) && rex.id > 0 && rex.id < tom.id && tom.id < ada.id && ada.id < sue.id)
    assert.deepStrictEqual(await store.get(ada.id), ada)
    assert.equal(await store.get(sue.id + 1000), undefined)
    assert.deepStrictEqual(await store.list({ limit: 10 }), [rex, tom, ada, sue])
    assert.deepStrictEqual(await store.list({ status: 'available', limit: 10 }), [rex, ada])
    assert.deepStrictEqual(await store.list({ status: 'available', limit: 1 }), [rex])
    assert.deepStrictEqual(await store.list({ status: 'available', limit: 10, after: rex.id }), [ada])
    assert.deepStrictEqual(await store.list({ status: 'pending', limit: 10 }), [])
  } finally {
    await store.close?.()
  }
  assert.equal(await journalMode(path, driver), 'wal')

  const reopened = sqliteStore({ path, driver })
  try {
    assert.deepStrictEqual(await reopened.list({ limit: 10 }), [rex, tom, ada, sue], 'the file kept its pets')
    const next = await reopened.create({ name: 'Max', categoryId: 4, status: 'pending' })
    assert.ok(next.id > sue.id)
    assert.deepStrictEqual(await reopened.list({ status: 'pending', limit: 10 }), [next])
  } finally {
    await reopened.close?.()
  }

  const memory = sqliteStore({ path: ':memory:', driver })
  try {
    const pet = await memory.create({ name: 'Mem', categoryId: 5, status: 'sold' })
    assert.deepStrictEqual(await memory.get(pet.id), pet)
    assert.deepStrictEqual(await memory.list({ status: 'sold', limit: 5 }), [pet])
    // The driver hands the JSON text over as it is: escapes, emoji and big numbers must survive it.
    await createHardPets(memory)
    await assertJsonPagesMatchList(memory, { limits: [1, 3, 100] })
  } finally {
    await memory.close?.()
  }
}
