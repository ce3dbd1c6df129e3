/**
 * `sqliteStore`'s migrations on real files: one that an earlier version made (migration 0001
 * only, its pets in it) and a new one end with the same schema, and the page by status is read
 * from its index alone (migration 0002), as SQLite's own query plan says. The driver is the
 * runtime's (better-sqlite3 on Node 20, node:sqlite on 22 and 24).
 *
 * Run: node --import tsx --test test/sqlite-migrations.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Kysely, type Migration, Migrator, SqliteDialect } from 'kysely'
import { createPetstore } from '../src/index.js'
import { sqliteStatements } from '../src/store/sql/dialects/sqlite.js'
import { kyselyStore } from '../src/store/sql/kysely.js'
import { migrations } from '../src/store/sql/migrations.js'
import { sqliteGeneration } from '../src/store/sql/schema-history.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { type DriverDatabase, loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-sqlite-migrations-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const TABLE = 'petstore_pets'
const KEY = 'k'

const rows = (database: DriverDatabase, query: string, parameters: unknown[] = []) =>
  database.prepare(query).all(parameters) as Array<Record<string, unknown>>

const indexesOf = (database: DriverDatabase) =>
  rows(database, `select name from sqlite_master where type = 'index' and tbl_name = '${TABLE}' order by name`).map(
    (row) => row.name,
  )

/** How SQLite runs the store's page of 100 `sold` pets. */
const pagePlan = (database: DriverDatabase) =>
  rows(database, `explain query plan ${sqliteStatements({ table: TABLE, schema: undefined }).jsonPage(true, 100)}`, [
    'sold',
    0,
  ]).map((row) => String(row.detail))

/** The file as a version before migration 0002 left it: 0001 recorded by kysely's Migrator, and two pets. */
async function fileOfMigration0001(path: string, open: (path: string) => DriverDatabase): Promise<void> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: open(path) }) })
  const first: Record<string, Migration> = {
    '0001_create_pets': migrations(TABLE, 'sqlite')['0001_create_pets'] as Migration,
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => first },
    migrationTableName: 'petstore_migration',
    migrationLockTableName: 'petstore_migration_lock',
  })
  const { error } = await migrator.migrateToLatest()
  assert.equal(error, undefined)
  await db
    .insertInto(TABLE)
    .values([
      { name: 'Rex', category_id: 1, status: 'sold' },
      { name: 'Tom', category_id: 2, status: null },
    ])
    .execute()
  await db.destroy()
}

describe('sqliteStore migrations', () => {
  it('a file of migration 0001 keeps its pets and gets the index the page by status is read from', async () => {
    const { driver, open } = await loadSqliteDriver()
    const path = join(dir, 'old.db')
    await fileOfMigration0001(path, open)
    const before = open(path)
    assert.deepEqual(indexesOf(before), [`${TABLE}_status_id`])
    // The page reads the generation too, whose table 0003 makes: there for the plan only, rolled back.
    const run = (statement: string) => before.prepare(statement).run([])
    run('begin')
    for (const statement of sqliteGeneration({ table: TABLE, schema: undefined })) run(statement)
    const planBefore = pagePlan(before)
    run('rollback')
    assert.ok(!planBefore.some((step) => step.includes('COVERING INDEX')), planBefore.join('; '))
    assert.deepEqual(rows(before, `select name from sqlite_master where name = '${TABLE}_reset_gen'`), [])
    before.close()

    const store = sqliteStore({ path, driver })
    const handler = createPetstore({ store, keys: [KEY] })
    const answer = await handler(
      new Request('http://x/v1/pets?status=sold', { headers: { authorization: `Bearer ${KEY}` } }),
    )
    assert.equal(answer.status, 200)
    assert.deepEqual(await answer.json(), [{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }])
    await store.close?.()

    const database = open(path)
    try {
      assert.deepEqual(indexesOf(database), [`${TABLE}_by_status`])
      assert.ok(
        pagePlan(database).some((step) => step.includes(`COVERING INDEX ${TABLE}_by_status`)),
        pagePlan(database).join('; '),
      )
      assert.deepEqual(
        rows(database, 'select name from petstore_migration order by name').map((row) => row.name),
        ['0001_create_pets', '0002_status_index_covers_pages', '0003_idempotency_keys', '0004_generation'],
      )
      // 0003: the idempotency keys beside the pets, and the index their sweep deletes by.
      assert.deepEqual(
        rows(database, `select name from sqlite_master where tbl_name = '${TABLE}_idem_keys' order by name`).map(
          (row) => row.name,
        ),
        [`${TABLE}_idem_exp`, `${TABLE}_idem_keys`, `sqlite_autoindex_${TABLE}_idem_keys_1`],
      )
    } finally {
      database.close()
    }
  })

  it('a file whose schema is current opens with one read of the migration table, not the catalog', async () => {
    const { open } = await loadSqliteDriver()
    const path = join(dir, 'current.db')
    /** A store on `path` through kysely, with each statement it runs up to its first answer. */
    const firstUse = async () => {
      const statements: string[] = []
      const db = new Kysely<any>({
        dialect: new SqliteDialect({ database: open(path) }),
        log: (event) => void statements.push(event.query.sql),
      })
      const store = kyselyStore(db, { destroyOnClose: true })
      try {
        return { got: await store.get(1), statements }
      } finally {
        await store.close?.()
      }
    }
    const first = await firstUse()
    assert.equal(first.got, undefined)
    assert.ok(
      first.statements.some((statement) => statement.includes('sqlite_master')),
      first.statements.join('\n'),
    )
    const second = await firstUse()
    assert.equal(second.statements.length, 2, second.statements.join('\n'))
    assert.match(second.statements[0]!, /^select "name" from "petstore_migration"$/)

    // A step this version does not know (a newer one ran): refused, as kysely's Migrator refuses it.
    const database = open(path)
    database.prepare(`insert into petstore_migration (name, timestamp) values ('9999_future', 'now')`).run([])
    database.close()
    await assert.rejects(firstUse(), /9999_future/)
  })

  it('a new file has that index alone', async () => {
    const { driver, open } = await loadSqliteDriver()
    const path = join(dir, 'new.db')
    const store = sqliteStore({ path, driver })
    await store.create({ name: 'Rex', categoryId: 1, status: 'sold' })
    await store.close?.()
    const database = open(path)
    try {
      assert.deepEqual(indexesOf(database), [`${TABLE}_by_status`])
      assert.ok(
        pagePlan(database).some((step) => step.includes('COVERING INDEX')),
        pagePlan(database).join('; '),
      )
    } finally {
      database.close()
    }
  })
})
