/**
 * The PostgreSQL and MySQL schemas are the SQL text of their dialects now, where migration 0001
 * was once written with kysely's schema builder (PostgreSQL) and its `sql` template (MySQL):
 * the text must be what those wrote, so that a database made then and one made now hold the
 * same schema. Compiled only: no database is needed.
 *
 * Run: node --import tsx --test test/sql-schema.test.ts
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely'
import { mysqlMigrations, postgresMigrations } from '../src/store/sql/schema-history.js'

/** Names that need their quotes doubled, with a schema and without. */
const TARGETS = [
  { table: 'petstore_pets', schema: undefined },
  { table: 'pe"t`s', schema: 'sch"e`ma' },
]

describe('migration 0001 as text', () => {
  it('on PostgreSQL, is what kysely’s schema builder wrote', () => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: {} as never }) })
    for (const { table, schema } of TARGETS) {
      const scoped = schema ? db.withSchema(schema) : db
      const built = scoped.schema
        .createTable(table)
        .ifNotExists()
        .addColumn('id', 'bigserial', (column) => column.primaryKey())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('category_id', 'bigint', (column) => column.notNull())
        .addColumn('status', 'varchar(16)')
        .compile().sql
      const indexed = scoped.schema
        .createIndex(`${table}_status_id`)
        .ifNotExists()
        .on(table)
        .columns(['status', 'id'])
        .compile().sql
      const migrations = postgresMigrations({ table, schema })
      assert.deepEqual(migrations['0001_create_pets'], [built, indexed])
      assert.deepEqual(migrations['0002_status_index_covers_pages'], [])
    }
  })

  it('on MySQL, is what the `sql` template wrote, but for its line breaks and indentation', () => {
    const db = new Kysely<any>({ dialect: new MysqlDialect({ pool: {} as never }) })
    const spaced = (text: string) => text.replace(/\s+/g, ' ')
    for (const { table, schema } of TARGETS) {
      const written = sql`create table if not exists ${sql.table(schema ? `${schema}.${table}` : table)} (
            id bigint not null auto_increment primary key,
            name varchar(255) not null,
            category_id bigint not null,
            status varchar(16),
            index ${sql.id(`${table}_status_id`)} (status, id)
          ) default character set utf8mb4 collate utf8mb4_bin`.compile(db).sql
      const migrations = mysqlMigrations({ table, schema })
      assert.deepEqual(migrations['0001_create_pets']?.map(spaced), [spaced(written)])
      assert.deepEqual(migrations['0002_status_index_covers_pages'], [])
    }
  })
})
