/**
 * The schema of the SQL stores, as kysely migrations kept in code (nothing is
 * read from disk at run time), and the dialect differences they need.
 *
 * @module
 */
import { type Kysely, type Migration, MysqlAdapter, PostgresAdapter } from 'kysely'

/** The SQL family a kysely instance speaks, read from its adapter. */
export type SqlFamily = 'sqlite' | 'postgres' | 'mysql'

export function sqlFamily(db: Kysely<any>): SqlFamily {
  const adapter = db.getExecutor().adapter
  if (adapter instanceof PostgresAdapter) return 'postgres'
  if (adapter instanceof MysqlAdapter) return 'mysql'
  return 'sqlite'
}

/**
 * Versioned migrations for a pets table named `table`. Each is idempotent
 * (`if not exists`) so that two processes racing past the migration lock of
 * a dialect that has none (SQLite) still end with one schema.
 */
export function migrations(table: string, family: SqlFamily): Record<string, Migration> {
  return {
    '0001_create_pets': {
      async up(db) {
        await db.schema
          .createTable(table)
          .ifNotExists()
          .addColumn(
            'id',
            family === 'postgres' ? 'bigserial' : family === 'mysql' ? 'bigint' : 'integer',
            (column) => {
              const key = column.primaryKey()
              // SQLite's AUTOINCREMENT never hands out an id again, even the largest one after a delete.
              return family === 'postgres' ? key : key.autoIncrement()
            },
          )
          .addColumn('name', family === 'mysql' ? 'varchar(255)' : 'text', (column) => column.notNull())
          .addColumn('category_id', 'bigint', (column) => column.notNull())
          .addColumn('status', 'varchar(16)')
          .execute()
        await db.schema.createIndex(`${table}_status_id`).ifNotExists().on(table).columns(['status', 'id']).execute()
      },
    },
  }
}
