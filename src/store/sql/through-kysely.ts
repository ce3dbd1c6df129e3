/**
 * A dialect's statements run through a kysely instance: the calls of a
 * `kyselyStore` (the same SQL text as the stores' own drivers run, as raw
 * compiled queries), and what a store asks before it migrates.
 *
 * @module
 */
import { CompiledQuery, type Kysely, type QueryResult, sql } from 'kysely'
import { tracing } from '../../shared/tracing.js'
import { type MysqlRunner, mysqlHotPath, systemOf, VERSION } from './dialects/mysql.js'
import { CURRENT_SCHEMA, postgresHotPath } from './dialects/postgres.js'
import { type SqliteConnection, sqliteHotPath } from './dialects/sqlite.js'
import type { HotPath, HotPathTarget } from './hot-path.js'
import type { SqlFamily } from './migrations.js'
import { describeQuery, inQuerySpan } from './query-spans.js'

/** Runs `text` with `parameters` on `db`, or on one of its connections. */
const execute = (db: Kysely<any>, text: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> =>
  db.executeQuery(CompiledQuery.raw(text, [...parameters]))

/** The first row of `text` on `db`, compiled by kysely (so its plugins see it: a query span). */
async function firstRow(db: Kysely<any>, text: string): Promise<Record<string, unknown> | undefined> {
  return (await sql.raw<Record<string, unknown>>(text).execute(db)).rows[0]
}

/**
 * Where the tables of a store on `db` go, and the server as its query spans name it: a
 * PostgreSQL store without a schema names the connection's current one (kysely's Migrator looks
 * for its tables in every schema unless told one), a MySQL-family server says whether it is MariaDB.
 */
export async function targetOf(db: Kysely<any>, family: SqlFamily, target: HotPathTarget): Promise<HotPathTarget> {
  if (family === 'postgres') {
    if (target.schema !== undefined) return { ...target, system: 'postgresql' }
    const schema = (await firstRow(db, CURRENT_SCHEMA))?.schema
    return { ...target, schema: typeof schema === 'string' ? schema : undefined, system: 'postgresql' }
  }
  if (family === 'mysql') return { ...target, system: systemOf((await firstRow(db, VERSION))?.version) }
  return { ...target, system: 'sqlite' }
}

/**
 * SQLite statements on `db`, rows read as their values (in the order selected, as a driver's
 * own connection reads them), a query span each when tracing is on: the other dialects make
 * their spans themselves.
 */
function sqliteOn(db: Kysely<any>, table: string): SqliteConnection {
  const run = (text: string) => {
    const query = describeQuery('sqlite', text, table)
    return (parameters: readonly unknown[]) =>
      tracing() ? inQuerySpan(query, () => execute(db, text, parameters)) : execute(db, text, parameters)
  }
  return {
    query(text) {
      const rows = run(text)
      return {
        get: async (parameters) => {
          const [row] = (await rows(parameters)).rows
          return row === undefined ? undefined : Object.values(row as object)
        },
        all: async (parameters) => (await rows(parameters)).rows.map((row) => Object.values(row as object)),
      }
    },
    command(text) {
      const effect = run(text)
      return { run: async (parameters) => Number((await effect(parameters)).insertId) }
    },
    // kysely holds its one SQLite connection for the transaction: no other statement comes between.
    transaction: (steps) =>
      db.transaction().execute(async (trx) => {
        const ids: number[] = []
        for (const { text, parameters } of steps) ids.push(Number((await execute(trx, text, parameters)).insertId))
        return ids
      }),
  }
}

/** MySQL statements on `db`: rows, or for an insert its header (`insertId`), as mysql2 gives them. */
const mysqlOn =
  (db: Kysely<any>): MysqlRunner =>
  async (text, values) => {
    const { rows, insertId } = await execute(db, text, values)
    return insertId === undefined ? rows : { insertId }
  }

/** The calls of `family`'s dialect on `target`, run by kysely. */
export function throughKysely(db: Kysely<any>, family: SqlFamily, target: HotPathTarget): HotPath {
  if (family === 'postgres') return postgresHotPath(({ text, values }) => execute(db, text, values), target)
  if (family === 'sqlite') return sqliteHotPath(sqliteOn(db, target.table), target)
  // The insert lock is a connection's: one of kysely's for the statements of a create.
  const session = <T>(work: (run: MysqlRunner) => Promise<T>) =>
    db.connection().execute((connection) => work(mysqlOn(connection)))
  return mysqlHotPath(mysqlOn(db), session, target)
}
