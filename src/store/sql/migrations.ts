/**
 * The schema of the SQL stores, as kysely migrations kept in code (nothing is
 * read from disk at run time), and the dialect differences they need.
 *
 * @module
 */
import { type Kysely, type Migration, MysqlAdapter, PostgresAdapter, sql } from 'kysely'
import { sqlitePetsSchema, sqliteStatusIndex } from './sqlite-statements.js'

/** The SQL family a kysely instance speaks, read from its adapter. */
export type SqlFamily = 'sqlite' | 'postgres' | 'mysql'

export function sqlFamily(db: Kysely<any>): SqlFamily {
  const adapter = db.getExecutor().adapter
  if (adapter instanceof PostgresAdapter) return 'postgres'
  if (adapter instanceof MysqlAdapter) return 'mysql'
  return 'sqlite'
}

/**
 * Versioned migrations for a pets table named `table` (in `schema` when
 * given). Each is idempotent (`if not exists`) so that two processes racing
 * past the migration lock of a dialect that has none (SQLite) still end with
 * one schema.
 */
export function migrations(table: string, family: SqlFamily, schema?: string): Record<string, Migration> {
  return {
    '0001_create_pets': {
      async up(migrating) {
        const db = schema ? migrating.withSchema(schema) : migrating
        const index = `${table}_status_id`
        if (family === 'mysql') {
          // MySQL 8 has no `create index if not exists`: the index is declared with the table.
          // utf8mb4 spelled out, as MariaDB may default to latin1: names hold any Unicode, 255 code points.
          await sql`create table if not exists ${sql.table(schema ? `${schema}.${table}` : table)} (
            id bigint not null auto_increment primary key,
            name varchar(255) not null,
            category_id bigint not null,
            status varchar(16),
            index ${sql.id(index)} (status, id)
          ) default character set utf8mb4 collate utf8mb4_bin`.execute(migrating)
          return
        }
        if (family === 'sqlite') {
          // The same SQL as the D1 store's schema, which runs without kysely.
          for (const statement of sqlitePetsSchema({ table, schema })) await sql.raw(statement).execute(migrating)
          return
        }
        await db.schema
          .createTable(table)
          .ifNotExists()
          .addColumn('id', 'bigserial', (column) => column.primaryKey())
          .addColumn('name', 'text', (column) => column.notNull())
          .addColumn('category_id', 'bigint', (column) => column.notNull())
          .addColumn('status', 'varchar(16)')
          .execute()
        await db.schema.createIndex(index).ifNotExists().on(table).columns(['status', 'id']).execute()
      },
    },
    // SQLite only, where it was measured (sqliteStatusIndex); PostgreSQL and MySQL keep the index of 0001.
    '0002_status_index_covers_pages': {
      async up(migrating) {
        if (family !== 'sqlite') return
        for (const statement of sqliteStatusIndex({ table, schema })) await sql.raw(statement).execute(migrating)
      },
    },
  }
}
