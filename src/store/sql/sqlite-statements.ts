/**
 * Internal to the SQLite and D1 stores: the SQL of their schema and of their
 * hot path, written once for both (D1 is SQLite, reached through Cloudflare's
 * binding instead of a driver). No kysely here: the D1 store runs this SQL
 * itself, and a Worker's bundle is a quarter the size without kysely. Parameters are positional (`?`): the drivers name them
 * differently, and D1 binds by position.
 *
 * @module
 */
import { type HotPathTarget, petColumns, qualifiedTable, quoteName } from './hot-path.js'

/** A pet as JSON text, in the API's form: no `status` key when the column is NULL. */
const PET_JSON = `case when status is null
  then json_object('id', id, 'name', name, 'categoryId', category_id)
  else json_object('id', id, 'name', name, 'categoryId', category_id, 'status', status) end`

/**
 * Migration 0001 on SQLite: the pets table and its index, each idempotent
 * (`if not exists`). The text is what kysely's schema builder wrote before it
 * moved here, so a database made then and one made now hold the same schema.
 * SQLite's AUTOINCREMENT never hands out an id again, even the largest one
 * after a delete. In an attached `schema`, SQLite names the index's schema,
 * not its table's.
 */
export function sqlitePetsSchema(target: HotPathTarget): string[] {
  return [
    sqlitePetsTable(target),
    `create index if not exists ${indexName(target, '_status_id')} on ${quoteName(target.table)} ("status", "id")`,
  ]
}

/** The index `<table><suffix>`, quoted, in the table's schema where it has one. */
function indexName({ table, schema }: HotPathTarget, suffix: string): string {
  return `${schema === undefined ? '' : `${quoteName(schema)}.`}${quoteName(`${table}${suffix}`)}`
}

/** The pets table of migration 0001, alone. */
export function sqlitePetsTable(target: HotPathTarget): string {
  return `create table if not exists ${qualifiedTable(target)} ("id" integer primary key autoincrement, "name" text not null, "category_id" bigint not null, "status" varchar(16))`
}

/**
 * Migration 0002 on SQLite: the page by status read from its index alone. The index of 0001
 * holds `(status, id)`, so each pet of a page was then looked up in the table by its id; this
 * one holds the page's other columns too (`name`, `category_id`), and a page of 100 `sold`
 * pets took its query 38 µs instead of 51 (better-sqlite3, 1,000 pets). Its name is as long as
 * the old one's, so the bound on a table's name stays. Idempotent, and a no-op once done, so
 * the D1 store runs it on every start, after 0001's table (not 0001's index, which it would
 * build only for this to drop).
 */
export function sqliteStatusIndex(target: HotPathTarget): string[] {
  return [
    `create index if not exists ${indexName(target, '_by_status')} on ${quoteName(target.table)} ("status", "id", "name", "category_id")`,
    `drop index if exists ${indexName(target, '_status_id')}`,
  ]
}

/** The statements of a SQLite hot path; the pages come unfiltered or by status. */
export interface SqliteStatements {
  /** `(id)` → the pet's row. */
  byId: string
  /** `([status,] after)` → up to `limit` rows in id order. */
  rowPage(byStatus: boolean, limit: number): string
  /** `([status,] after)` → one row `{ json, count, last_id }` of up to `limit` pets, see {@link pageOfJson}. */
  jsonPage(byStatus: boolean, limit: number): string
  /** `(name, category_id, status)`; the new id is the driver's last insert rowid. */
  insert: string
}

/**
 * The limit of a page, written into its SQL text rather than bound: SQLite's
 * planner weighs a LIMIT's value, so it marks a bound `limit ?` as one whose
 * every new binding expires the statement, and each run then parsed and
 * planned the SQL again (a page of rows 3.3 µs instead of 0.6, the JSON
 * page's subquery 6.4 instead of 1.7; better-sqlite3 12 with SQLite 3.53,
 * measured). Only a positive safe integer is ever written in.
 */
function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`a page limit must be a positive integer, got ${limit}`)
  return limit
}

/**
 * The SQL of the hot path on the pets table of `target`. A page as JSON is
 * built by SQLite itself (`json_group_array`): one string instead of a row
 * object per pet, turned into a pet, turned into text (at 100 pets, less than
 * half the time). It aggregates `limit + 1` pets, in id order as the subquery
 * yields them, to learn whether more follow, and `pageOfJson` cuts the extra
 * one off.
 */
export function sqliteStatements(target: HotPathTarget): SqliteStatements {
  const from = qualifiedTable(target)
  // Rows read category_id as text (exact beyond 2^53 on every driver, D1 included); the JSON pages write the integer itself.
  const columns = petColumns('sqlite')
  const page = (byStatus: boolean, limit: number, selected = columns) =>
    `select ${selected} from ${from} where ${byStatus ? 'status = ? and ' : ''}id > ? order by id limit ${checkedLimit(limit)}`
  return {
    byId: `select ${columns} from ${from} where id = ?`,
    rowPage: (byStatus, limit) => page(byStatus, limit),
    jsonPage: (byStatus, limit) =>
      `select json_group_array(${PET_JSON}) as json, count(*) as count, max(id) as last_id from (${page(byStatus, limit, 'id, name, category_id, status')})`,
    insert: `insert into ${from} (name, category_id, status) values (?, ?, ?)`,
  }
}

/** The statements of {@link SqliteStatements}, each prepared by a driver (a SQLite driver, or D1). */
export interface PreparedStatements<R, W> {
  byId: R
  insert: W
  /** The page of rows by `status` (or of all) with `limit` written in, prepared on its first use. */
  rowPage(status: string | undefined, limit: number): R
  /** The page as JSON, alike. */
  jsonPage(status: string | undefined, limit: number): R
}

/** Page statements kept per kind: the handler asks for 2 to 101 rows, so this bound is never reached by it. */
const PAGES_KEPT = 256

/**
 * Prepares the statements of `sql`, the queries with `read` and the insert with `write` (the pages
 * as they are first asked for): one place for the SQLite and D1 hot paths.
 */
export function prepareAll<R, W>(
  sql: SqliteStatements,
  read: (text: string) => R,
  write: (text: string) => W,
): PreparedStatements<R, W> {
  const pages = (text: (byStatus: boolean, limit: number) => string) => {
    const kept = [new Map<number, R>(), new Map<number, R>()] as const
    return (status: string | undefined, limit: number): R => {
      const byStatus = status !== undefined
      const statements = kept[byStatus ? 1 : 0]
      let statement = statements.get(limit)
      if (statement === undefined) {
        statement = read(text(byStatus, limit))
        // A caller inventing limits (the store's own API takes any) cannot grow it without end.
        if (statements.size >= PAGES_KEPT) statements.clear()
        statements.set(limit, statement)
      }
      return statement
    }
  }
  return {
    byId: read(sql.byId),
    insert: write(sql.insert),
    rowPage: pages(sql.rowPage),
    jsonPage: pages(sql.jsonPage),
  }
}

/** The positional parameters of a page: ids are positive, so no cursor is the cursor 0. */
export function pageParameters(status: string | undefined, after: number | undefined): unknown[] {
  return status === undefined ? [after ?? 0] : [status, after ?? 0]
}
