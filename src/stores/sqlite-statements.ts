/**
 * Internal to the SQLite and D1 stores: the SQL of their schema and of their
 * hot path, written once for both (D1 is SQLite, reached through Cloudflare's
 * binding instead of a driver). No kysely here: the D1 store runs this SQL
 * itself, and a Worker's bundle is a quarter the size without kysely. Parameters are positional (`?`): the drivers name them
 * differently, and D1 binds by position.
 *
 * @module
 */
import { type HotPathTarget, petColumns, qualifiedTable } from './hot-path.js'

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
export function sqlitePetsSchema({ table, schema }: HotPathTarget): string[] {
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`
  const index = `${schema === undefined ? '' : `${quote(schema)}.`}${quote(`${table}_status_id`)}`
  return [
    `create table if not exists ${qualifiedTable({ table, schema })} ("id" integer primary key autoincrement, "name" text not null, "category_id" bigint not null, "status" varchar(16))`,
    `create index if not exists ${index} on ${quote(table)} ("status", "id")`,
  ]
}

/** The statements of a SQLite hot path; the pages come unfiltered (`[0]`) and by status (`[1]`). */
export interface SqliteStatements {
  /** `(id)` → the pet's row. */
  byId: string
  /** `([status,] after, limit)` → rows in id order. */
  rowPages: readonly [string, string]
  /** `([status,] after, limit)` → one row `{ json, count, last_id }`, see {@link pageOfJson}. */
  jsonPages: readonly [string, string]
  /** `(name, category_id, status)`; the new id is the driver's last insert rowid. */
  insert: string
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
  const page = (byStatus: boolean, selected = columns) =>
    `select ${selected} from ${from} where ${byStatus ? 'status = ? and ' : ''}id > ? order by id limit ?`
  const jsonPage = (byStatus: boolean) =>
    `select json_group_array(${PET_JSON}) as json, count(*) as count, max(id) as last_id from (${page(byStatus, 'id, name, category_id, status')})`
  return {
    byId: `select ${columns} from ${from} where id = ?`,
    rowPages: [page(false), page(true)],
    jsonPages: [jsonPage(false), jsonPage(true)],
    insert: `insert into ${from} (name, category_id, status) values (?, ?, ?)`,
  }
}

/** The statements of {@link SqliteStatements}, each prepared by a driver (a SQLite driver, or D1). */
export interface PreparedStatements<S> {
  byId: S
  rowPages: readonly [S, S]
  jsonPages: readonly [S, S]
  insert: S
}

/** Prepares every statement of `sql` with `prepare`: one place for the SQLite and D1 hot paths. */
export function prepareAll<S>(sql: SqliteStatements, prepare: (text: string) => S): PreparedStatements<S> {
  return {
    byId: prepare(sql.byId),
    rowPages: [prepare(sql.rowPages[0]), prepare(sql.rowPages[1])],
    jsonPages: [prepare(sql.jsonPages[0]), prepare(sql.jsonPages[1])],
    insert: prepare(sql.insert),
  }
}

/** The positional parameters of a page: ids are positive, so no cursor is the cursor 0. */
export function pageParameters(status: string | undefined, after: number | undefined, limit: number): unknown[] {
  return status === undefined ? [after ?? 0, limit] : [status, after ?? 0, limit]
}
