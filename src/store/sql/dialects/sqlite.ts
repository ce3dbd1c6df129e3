/**
 * The SQLite dialect: its schema, its statements, and what its errors mean.
 * Written once for every way of running them: `sqliteStore`'s own driver
 * (at once), a `kyselyStore` over a SQLite instance, and D1 (SQLite reached
 * through Cloudflare's binding). No kysely here: the D1 store runs this SQL
 * itself, and a Worker's bundle is a quarter the size without kysely.
 * Parameters are positional (`?`): the drivers name them differently, and D1
 * binds by position.
 *
 * @module
 */
import type { NewPet } from '../../../api/schemas.js'
import type { Answer, JsonPage, ListQuery } from '../../store.js'
import {
  type DialectErrors,
  EMPTY_PAGE,
  type HotPath,
  type HotPathTarget,
  type JsonPageValues,
  pageOfJsonValues,
  petOfValues,
  qualifiedTable,
  storedPet,
  thenAt,
} from '../hot-path.js'
import type { KeyedRow, KeyRow, KeyStatements } from '../keyed-sql.js'
import {
  INSERTED_COLUMNS,
  INSERTED_PARAMETERS,
  insertedValues,
  STORED_COLUMNS,
  selectedColumns,
  sqlitePetJson,
} from '../pet-columns.js'
import { generationTable, keysTable } from '../schema-history.js'

/** A pet as JSON text, in the API's form: no key for a NULL optional column. */
const PET_JSON = sqlitePetJson()

/** The columns of a pet, int64 ones as decimal text: exact on every driver, D1 included. */
const COLUMNS = selectedColumns('sqlite')

/** The statements of the SQLite dialect; the pages come unfiltered or by status. */
export interface SqliteStatements {
  /** `(id)` → the pet's row. */
  byId: string
  /** `([status,] after)` → up to `limit` rows in id order. */
  rowPage(byStatus: boolean, limit: number): string
  /** `([status,] after)` → one row `{ json, count, last_id }` of up to `limit` pets, see `pageOfJson`. */
  jsonPage(byStatus: boolean, limit: number): string
  /** The pet's columns (see `insertedValues`); the new id is the driver's last insert rowid. */
  insert: string
  /** `()` → a row, or none: the table is there. */
  ping: string
}

/**
 * The limit of a page, written into its SQL text rather than bound: SQLite's
 * planner weighs a LIMIT's value, so it marks a bound `limit ?` as one whose
 * every new binding expires the statement, and each run would parse and
 * plan the SQL again. Only a positive safe integer is ever written in.
 */
function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`a page limit must be a positive integer, got ${limit}`)
  return limit
}

/**
 * The SQL on the pets table of `target`. A page as JSON is built by SQLite
 * itself (`json_group_array`): one string instead of a row object per pet,
 * turned into a pet, turned into text (at 100 pets, less than half the time).
 * It aggregates `limit + 1` pets, in id order as the subquery yields them, to
 * learn whether more follow, and `pageOfJson` cuts the extra one off.
 */
export function sqliteStatements(target: HotPathTarget): SqliteStatements {
  const from = qualifiedTable(target)
  // Rows read int64 columns as text; the JSON pages write the integer itself.
  const page = (byStatus: boolean, limit: number, selected = COLUMNS) =>
    `select ${selected} from ${from} where ${byStatus ? 'status = ? and ' : ''}id > ? order by id limit ${checkedLimit(limit)}`
  // The generation in the page's own statement (see generationTable): one read, at once.
  const generation = `(select generation from ${qualifiedTable(generationTable(target))})`
  return {
    byId: `select ${COLUMNS} from ${from} where id = ?`,
    rowPage: (byStatus, limit) => page(byStatus, limit),
    jsonPage: (byStatus, limit) =>
      `select json_group_array(${PET_JSON}) as json, count(*) as count, max(id) as last_id, ${generation} from (${page(byStatus, limit, STORED_COLUMNS)})`,
    insert: `insert into ${from} (${INSERTED_COLUMNS}) values (${INSERTED_PARAMETERS})`,
    ping: `select id from ${from} limit 1`,
  }
}

/** The SQL on the keys table beside `target`'s pets (see `sqliteKeysSchema`). */
export function sqliteKeyStatements(target: HotPathTarget) {
  const keys = qualifiedTable(keysTable(target))
  return {
    /** `(scope, key)` → `[fingerprint, pet_id, expires_at]`. */
    find: `select "fingerprint", "pet_id", "expires_at" from ${keys} where "scope" = ? and "key" = ?`,
    /** `(scope, key, before)`. */
    drop: `delete from ${keys} where "scope" = ? and "key" = ? and "expires_at" <= ?`,
    /** `(now)`. */
    sweep: `delete from ${keys} where "expires_at" <= ?`,
    /** `(scope, key, fingerprint, expires_at)`, right after its pet's insert: the pet is the last row inserted. */
    insert: `insert into ${keys} ("scope", "key", "fingerprint", "pet_id", "expires_at") values (?, ?, ?, last_insert_rowid(), ?)`,
  }
}

/** One statement of a {@link SqliteConnection.transaction}. */
export interface SqliteStep {
  text: string
  parameters: readonly unknown[]
}

/** A query prepared on a {@link SqliteConnection}, its rows read as arrays of values in the order selected. */
export interface SqliteQuery {
  /** The first row's values, or `undefined`. */
  get(parameters: readonly unknown[]): Answer<unknown[] | undefined>
  all(parameters: readonly unknown[]): Answer<unknown[][]>
}

/** A statement run for its effect: the last insert rowid. */
export interface SqliteCommand {
  run(parameters: readonly unknown[]): Answer<number>
}

/** What runs the dialect's statements: a driver's own connection, a kysely instance, or D1. */
export interface SqliteConnection {
  /**
   * Every statement answers before it returns (a driver's own connection): its reads are then
   * offered at once, and a batch of creates is one `begin immediate` … `commit` on it, as nothing
   * can run in between.
   */
  synchronous?: true
  query(text: string): SqliteQuery
  command(text: string): SqliteCommand
  /**
   * Runs `steps` in one transaction, all or none: the last insert rowid after each. Asynchronous
   * connections only (kysely, D1): on a synchronous one the dialect writes `begin immediate` … `commit`.
   */
  transaction?(steps: readonly SqliteStep[]): Promise<number[]>
}

/** Page statements kept per kind: the handler asks for 2 to 101 rows, so this bound is never reached by it. */
const PAGES_KEPT = 256

/** The page statements of `text`, each prepared with `prepare` as it is first asked for. */
function pagesOf<R>(text: (byStatus: boolean, limit: number) => string, prepare: (text: string) => R) {
  const kept = [new Map<number, R>(), new Map<number, R>()] as const
  return (status: string | undefined, limit: number): R => {
    const statements = kept[status === undefined ? 0 : 1]
    let statement = statements.get(limit)
    if (statement === undefined) {
      statement = prepare(text(status !== undefined, limit))
      // A caller inventing limits (the store's own API takes any) cannot grow it without end.
      if (statements.size >= PAGES_KEPT) statements.clear()
      statements.set(limit, statement)
    }
    return statement
  }
}

/** The positional parameters of a page: ids are positive, so no cursor is the cursor 0. */
const pageParameters = (status: string | undefined, after: number | undefined): unknown[] =>
  status === undefined ? [after ?? 0] : [status, after ?? 0]

const petOrNone = (values: unknown[] | undefined) => values && petOfValues(values)
const petsOf = (rows: unknown[][]) => rows.map(petOfValues)
const nothing = () => {}

/** The calls of a SQLite store on the pets table of `target`, its statements run by `connection`. */
export function sqliteHotPath(connection: SqliteConnection, target: HotPathTarget): HotPath {
  const sql = sqliteStatements(target)
  const query = (text: string) => connection.query(text)
  const byId = query(sql.byId)
  const ping = query(sql.ping)
  const insert = connection.command(sql.insert)
  const rowPage = pagesOf(sql.rowPage, query)
  const jsonPage = pagesOf(sql.jsonPage, query)
  const insertOne = (pet: NewPet) => insert.run(insertedValues(pet))

  const calls: HotPath = {
    keys: sqliteKeys(connection, target, insertOne),
    get: (id) => thenAt(byId.get([id]), petOrNone),
    list({ status, after, limit }: ListQuery) {
      if (!(limit >= 1)) return []
      return thenAt(rowPage(status, limit).all(pageParameters(status, after)), petsOf)
    },
    page({ status, after, limit }: ListQuery): Answer<JsonPage> {
      if (!(limit >= 1)) return EMPTY_PAGE
      return thenAt(jsonPage(status, limit + 1).get(pageParameters(status, after)), (values) =>
        pageOfJsonValues(values as JsonPageValues | undefined, limit),
      )
    },
    create: (pet) => thenAt(insertOne(pet), (id) => storedPet(id, pet)),
    ping: () => thenAt(ping.get([]), nothing),
  }
  return connection.synchronous
    ? { ...calls, synchronous: true, insertMany: inOneTransaction(connection, insertOne, 'autocommit') }
    : calls
}

const keyRowOf = (values: unknown[] | undefined): KeyRow | undefined =>
  values && { fingerprint: String(values[0]), petId: Number(values[1]), expiresAt: Number(values[2]) }

/**
 * The statements on the keys table: a pet and its key in one transaction, on a synchronous
 * connection by `begin immediate` … `commit` (as a batch of creates), else by the connection's own.
 */
function sqliteKeys(
  connection: SqliteConnection,
  target: HotPathTarget,
  insertPet: (pet: NewPet) => Answer<number>,
): KeyStatements {
  const sql = sqliteKeyStatements(target)
  const find = connection.query(sql.find)
  const drop = connection.command(sql.drop)
  const sweep = connection.command(sql.sweep)
  const keyValues = (row: KeyedRow) => [row.scope, row.key, row.fingerprint, row.expiresAt]
  let insertMany: (rows: readonly KeyedRow[]) => Answer<readonly number[]>
  if (connection.synchronous) {
    const insertKey = connection.command(sql.insert)
    insertMany = inOneTransaction(connection, (row: KeyedRow) => {
      const id = insertPet(row.pet) as number
      insertKey.run(keyValues(row))
      return id
    })
  } else {
    const { transaction } = connection
    if (transaction === undefined) throw new Error('an asynchronous SQLite connection needs transaction()')
    const petSql = sqliteStatements(target).insert
    insertMany = async (rows) => {
      const steps = rows.flatMap((row) => [
        { text: petSql, parameters: insertedValues(row.pet) },
        { text: sql.insert, parameters: keyValues(row) },
      ])
      // Each pet's id is the rowid after its own insert, the step before its key's.
      return (await transaction(steps)).filter((_, index) => index % 2 === 0)
    }
  }
  return {
    find: (scope, key) => thenAt(find.get([scope, key]), keyRowOf),
    drop: (scope, key, before) => thenAt(drop.run([scope, key, before]), nothing),
    sweep: (now) => thenAt(sweep.run([now]), nothing),
    insert: (row) => thenAt(insertMany([row]), (ids) => ids[0] as number),
    insertMany,
  }
}

/**
 * Group commit (see group-commit.ts) on a synchronous connection: a batch is one immediate
 * transaction, so one commit; the busy handler waits for another process's lock at
 * `begin immediate`, as at a lone insert.
 */
function inOneTransaction<Row>(
  connection: SqliteConnection,
  insertOne: (row: Row) => Answer<number>,
  alone: 'autocommit' | 'in-transaction' = 'in-transaction',
) {
  const [begin, commit, rollback] = ['begin immediate', 'commit', 'rollback'].map((text) => connection.command(text))
  // One insert alone commits by itself; a pet and its key are two.
  const loneCommits = alone === 'autocommit'
  return (pets: readonly Row[]): readonly number[] => {
    if (loneCommits && pets.length === 1) return [insertOne(pets[0]!) as number]
    begin!.run([])
    try {
      const ids = pets.map(insertOne) as number[]
      commit!.run([])
      return ids
    } catch (error) {
      try {
        rollback!.run([])
      } catch {
        // SQLite already rolled back (it does on some errors): nothing is open.
      }
      throw error
    }
  }
}

// node:sqlite reports every failure as ERR_SQLITE_ERROR with SQLite's numeric (extended) result code.
const EXTENDED: Record<number, string> = {
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}
const PRIMARY: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
}

const UNAVAILABLE = new Set(['SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_READONLY'])

/** What SQLite's errors say, with node:sqlite's numeric codes named as the other drivers name them. */
export const SQLITE_ERRORS: DialectErrors = {
  code({ code, errcode }) {
    if (code !== 'ERR_SQLITE_ERROR' || typeof errcode !== 'number') return undefined
    return EXTENDED[errcode] ?? PRIMARY[errcode & 0xff] ?? code
  },
  // A busy or locked file, a disk that fails or is full: the file is not there for us right now.
  unavailable: (code) => UNAVAILABLE.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY'),
  // SQLite has no migration lock: two processes may both record migration 0001 (it is idempotent).
  race: (code) => code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_CONSTRAINT'),
}
