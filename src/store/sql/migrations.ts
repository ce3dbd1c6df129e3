/**
 * The schema of the SQL stores as kysely migrations kept in code (nothing is
 * read from disk at run time): each dialect's SQL text, run by kysely's
 * `Migrator` under the names older versions recorded.
 *
 * @module
 */
import { type Kysely, type Migration, MysqlAdapter, PostgresAdapter, sql } from 'kysely'
import type { HotPathTarget } from './hot-path.js'
import { type Migrations, mysqlMigrations, postgresMigrations, sqliteMigrations } from './schema-history.js'

/** The SQL family a kysely instance speaks, read from its adapter. */
export type SqlFamily = 'sqlite' | 'postgres' | 'mysql'

export function sqlFamily(db: Kysely<any>): SqlFamily {
  const adapter = db.getExecutor().adapter
  if (adapter instanceof PostgresAdapter) return 'postgres'
  if (adapter instanceof MysqlAdapter) return 'mysql'
  return 'sqlite'
}

const SCHEMAS: Record<SqlFamily, (target: HotPathTarget) => Migrations> = {
  sqlite: sqliteMigrations,
  postgres: postgresMigrations,
  mysql: mysqlMigrations,
}

/** Versioned migrations for a pets table named `table` (in `schema` when given): see schema-history.ts. */
export function migrations(table: string, family: SqlFamily, schema?: string): Record<string, Migration> {
  const steps: Record<string, Migration> = {}
  for (const [name, statements] of Object.entries(SCHEMAS[family]({ table, schema }))) {
    steps[name] = {
      async up(db) {
        for (const statement of statements) await sql.raw(statement).execute(db)
      },
    }
  }
  return steps
}
