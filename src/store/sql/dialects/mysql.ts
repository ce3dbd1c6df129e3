/**
 * The MySQL dialect (MariaDB too): its schema, its statements, its id-order
 * insert and what its errors mean. `mysqlStore` runs the statements prepared
 * once per connection (`mysql2`'s `execute`); a `kyselyStore` over a MySQL
 * instance runs the same text through kysely. Building and compiling a kysely
 * query per request cost MariaDB's store a fifth of its speed against a
 * hand-written server.
 *
 * Pages are not written as JSON by the database: MySQL's `JSON_OBJECT` puts
 * spaces in, and `JSON_ARRAYAGG` has no `ORDER BY` on MySQL 8. Rows become
 * pets and the pets JSON here, as for a store of your own.
 *
 * @module
 */

import { jsonPageOf, oneMore } from '../../../api/pet-json.js'
import type { NewPet } from '../../../api/schemas.js'
import { PetstoreError } from '../../../shared/petstore-error.js'
import { tracing } from '../../../shared/tracing.js'
import type { JsonPage, ListQuery } from '../../store.js'
import {
  type DialectErrors,
  EMPTY_PAGE,
  type HotPath,
  type HotPathTarget,
  insertLockName,
  MYSQL_LOCK,
  type PetRow,
  storedPet,
  toPet,
  triedAgain,
} from '../hot-path.js'
import type { KeyedRow, KeyStatements } from '../keyed-sql.js'
import { INSERTED_COLUMNS, INSERTED_PARAMETERS, insertedValues, selectedColumns } from '../pet-columns.js'
import { type DbSystem, describeQuery, inQuerySpan, type QueryDescription } from '../query-spans.js'
import { generationTable, keysTable, mysqlTable } from '../schema-history.js'

/** The server's version, which names MariaDB where it is one (query spans say which). */
export const VERSION = 'select version() as version'

/** The query spans' `db.system` of a server of `version`. */
export const systemOf = (version: unknown): 'mysql' | 'mariadb' =>
  /mariadb/i.test(String(version)) ? 'mariadb' : 'mysql'

/** Runs one statement, prepared once per connection, with `values` for its `?`s: its rows, or its result header. */
export type MysqlRunner = (sql: string, values: unknown[]) => Promise<unknown>

/**
 * Borrows one connection of the pool for `work` (the insert lock is a
 * connection's), giving it a runner on that connection.
 */
export type MysqlSession = <T>(work: (run: MysqlRunner) => Promise<T>) => Promise<T>

/**
 * `runner` with a query span per statement when tracing is on (see query-spans.ts). The texts
 * are few (a page's limit and a batch's size are written in: at most a few hundred), each described once.
 */
function spannedRunner(system: DbSystem, table: string): (runner: MysqlRunner) => MysqlRunner {
  const described = new Map<string, QueryDescription>()
  const describe = (sql: string) => {
    let query = described.get(sql)
    if (query === undefined) {
      query = describeQuery(system, sql, table)
      described.set(sql, query)
    }
    return query
  }
  return (runner) => (sql, values) =>
    tracing() ? inQuerySpan(describe(sql), () => runner(sql, values)) : runner(sql, values)
}

/**
 * The statements of the hot path on `target`: `run` for one statement on any
 * connection, `session` for several on one. `create` takes the named insert
 * lock (see `insertLockName`) on its connection, so that pets become visible
 * in id order: the autocommitted insert is durable before the lock is let go.
 */
export function mysqlHotPath(untracedRun: MysqlRunner, untracedSession: MysqlSession, target: HotPathTarget): HotPath {
  const traced = spannedRunner(target.system === 'mariadb' ? 'mariadb' : 'mysql', target.table)
  const run = traced(untracedRun)
  const session: MysqlSession = (work) => untracedSession((on) => work(traced(on)))
  const from = mysqlTable(target)
  // int64 columns as decimal text: exact beyond 2^53 whatever the pool's number settings.
  const columns = selectedColumns('mysql')
  const lockName = insertLockName(target)
  const byId = `select ${columns} from ${from} where id = ?`
  // `limit ?` is refused by some servers in prepared statements: the limit is written in, one text per limit
  // (at most 101 of each kind, each prepared once per connection).
  // A JSON page reads the generation (see generationTable) in its own statement, on each row.
  const readGeneration = `select generation from ${mysqlTable(generationTable(target))}`
  const page = (byStatus: boolean, limit: number, generation: boolean) =>
    `select ${columns}${generation ? `, (${readGeneration}) as generation` : ''} from ${from} where ${byStatus ? 'status = ? and ' : ''}id > ? order by id limit ${limit}`

  async function rows({ status, limit, after = 0 }: ListQuery, generation: boolean) {
    // A limit the handler would never send (it validates 1..100): nothing, rather than SQL from it.
    if (!Number.isSafeInteger(limit) || limit < 1) return []
    const sql = page(status !== undefined, limit, generation)
    return (await run(sql, status === undefined ? [after] : [status, after])) as Array<
      PetRow & { generation?: unknown }
    >
  }

  const list = async (query: ListQuery) => (await rows(query, false)).map(toPet)

  /** The page of `query` and the generation it was read in: with no pet on it, read apart (a page after a cursor). */
  async function jsonPage(query: ListQuery): Promise<JsonPage> {
    const found = await rows(oneMore(query), true)
    let generation = found[0]?.generation
    // An empty first page needs none: it issues no cursor, and was given none to check.
    if (generation === undefined && query.after !== undefined)
      generation = ((await run(readGeneration, [])) as Array<{ generation: unknown }>)[0]?.generation
    return jsonPageOf(found.map(toPet), query.limit, generation === undefined ? undefined : Number(generation))
  }

  /**
   * Whether a multi-row insert's ids are consecutive from `LAST_INSERT_ID()`, `step` apart: InnoDB
   * promises it in `innodb_autoinc_lock_mode` 0 and 1 (MariaDB's default); mode 2 (MySQL 8's)
   * does not, so there the ids are read back under the lock. Asked once.
   */
  let consecutive: Promise<{ step: number } | undefined> | undefined
  const autoincrement = () =>
    (consecutive ??= run('select @@innodb_autoinc_lock_mode as mode, @@auto_increment_increment as step', []).then(
      (rows) => {
        const [row] = rows as Array<{ mode: unknown; step: unknown }>
        const mode = Number(row?.mode)
        return mode === 0 || mode === 1 ? { step: Number(row?.step) || 1 } : undefined
      },
      (error) => {
        consecutive = undefined
        throw error
      },
    ))
  // One text per batch size: group commit hands over powers of two only (see `take` in sql-store.ts), so
  // each connection prepares at most nine of them.
  const insertText = (count: number) =>
    `insert into ${from} (${INSERTED_COLUMNS}) values ${Array(count).fill(`(${INSERTED_PARAMETERS})`).join(', ')}`
  const keySql = mysqlKeyStatements(target)
  const readBackText = (count: number) => `select id from ${from} where id >= ? order by id limit ${count}`

  /** Runs `work` on one connection holding the named insert lock, let go after it. */
  function underInsertLock<T>(work: (on: MysqlRunner) => Promise<T>): Promise<T> {
    return session(async (on) => {
      const [lock] = (await on(MYSQL_LOCK.take, [lockName])) as Array<{ got: unknown }>
      if (Number(lock?.got) !== 1) {
        throw PetstoreError.unavailable(new Error('timed out waiting for the insert lock'))
      }
      try {
        return await work(on)
      } finally {
        await on(MYSQL_LOCK.release, [lockName])
      }
    })
  }

  /** Inserts `pets` in one autocommitted statement under the named lock: their ids, in order. */
  async function insertMany(pets: readonly NewPet[]): Promise<number[]> {
    const ids = pets.length === 1 ? { step: 1 } : await autoincrement()
    return underInsertLock(async (on) => {
      // Autocommitted: durable before the lock is let go. An int64 goes to the driver as given.
      const values = pets.flatMap(insertedValues)
      // A deadlock with another writer (a reset) rolled the insert back: it is tried again, in the lock.
      const { insertId } = (await triedAgain(() => on(insertText(pets.length), values), lockConflict)) as {
        insertId: number | string
      }
      const first = Number(insertId)
      if (ids !== undefined) return pets.map((_, index) => first + index * ids.step)
      // Under the lock no other create of ours runs: the rows from the first id on are this batch's.
      const rows = (await on(readBackText(pets.length), [insertId])) as Array<{ id: unknown }>
      return rows.map((row) => Number(row.id))
    })
  }

  /**
   * Keyed pets, each beside its key, in one transaction under the insert lock: inserted one by
   * one, since each key takes its pet's id. A key already there rolls the transaction back.
   */
  async function insertKeyed(rows: readonly KeyedRow[]): Promise<number[]> {
    return underInsertLock((on) =>
      // A deadlock with a reset rolled the whole transaction back: it is tried again, in the lock.
      triedAgain(async () => {
        await on('start transaction', [])
        try {
          const ids: number[] = []
          for (const row of rows) {
            const { insertId } = (await on(insertText(1), insertedValues(row.pet))) as { insertId: number | string }
            ids.push(Number(insertId))
            await on(keySql.insert, [row.scope, row.key, row.fingerprint, insertId, row.expiresAt])
          }
          await on('commit', [])
          return ids
        } catch (error) {
          await on('rollback', []).catch(() => undefined)
          throw error
        }
      }, lockConflict),
    )
  }

  return {
    keys: mysqlKeys(run, keySql, insertKeyed),
    async get(id) {
      const [row] = (await run(byId, [id])) as PetRow[]
      return row && toPet(row)
    },
    list,
    async page(query): Promise<JsonPage> {
      if (!(query.limit >= 1)) return EMPTY_PAGE
      return jsonPage(query)
    },
    async create(pet) {
      return storedPet(Number((await insertMany([pet]))[0]), pet)
    },
    async ping() {
      await run(`select id from ${from} limit 1`, [])
    },
    insertMany,
    batchOf: (ready) => 2 ** Math.floor(Math.log2(ready)),
  }
}

/** The SQL on the keys table beside `target`'s pets (see `mysqlMigrations`). */
function mysqlKeyStatements(target: HotPathTarget) {
  const keys = mysqlTable(keysTable(target))
  return {
    find: `select fingerprint, pet_id, expires_at from ${keys} where scope = ? and \`key\` = ?`,
    drop: `delete from ${keys} where scope = ? and \`key\` = ? and expires_at <= ?`,
    sweep: `delete from ${keys} where expires_at <= ?`,
    insert: `insert into ${keys} (scope, \`key\`, fingerprint, pet_id, expires_at) values (?, ?, ?, ?, ?)`,
  }
}

/** The statements on the keys table, `insertMany` the keyed insert of {@link mysqlHotPath}. */
function mysqlKeys(
  run: MysqlRunner,
  sql: ReturnType<typeof mysqlKeyStatements>,
  insertMany: (rows: readonly KeyedRow[]) => Promise<number[]>,
): KeyStatements {
  return {
    async find(scope, key) {
      const [row] = (await run(sql.find, [scope, key])) as Array<{
        fingerprint: string
        pet_id: unknown
        expires_at: unknown
      }>
      return (
        row && { fingerprint: String(row.fingerprint), petId: Number(row.pet_id), expiresAt: Number(row.expires_at) }
      )
    },
    async drop(scope, key, before) {
      await run(sql.drop, [scope, key, before])
    },
    async sweep(now) {
      await run(sql.sweep, [now])
    },
    insert: async (row) => (await insertMany([row]))[0] as number,
    insertMany,
  }
}

const UNAVAILABLE = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_STATEMENT_TIMEOUT',
  'ER_QUERY_TIMEOUT',
])

const RACE = new Set(['ER_DUP_ENTRY', 'ER_TABLE_EXISTS_ERROR', 'ER_LOCK_DEADLOCK'])

/**
 * A deadlock (1213) rolls the whole transaction back. A lock wait past `innodb_lock_wait_timeout`
 * (1205) rolls back the statement, which for an autocommitted insert is all of it; in a
 * transaction of ours the error ends it (kysely rolls back).
 */
const BUSY = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'])

/** Whether mysql2's `error` is a lock conflict that rolled the statement back. */
const lockConflict = (error: unknown): boolean => BUSY.has(String((error as { code?: unknown } | null)?.code))

/** What MySQL's errors say, by mysql2's codes. */
export const MYSQL_ERRORS: DialectErrors = {
  unavailable: (code) => UNAVAILABLE.has(code),
  // mysql2 marks errors that broke the connection as fatal ("Can't add new command when connection is in closed state").
  lost: ({ fatal }, code) => fatal === true && !code?.startsWith('ER_'),
  race: (code) => RACE.has(code),
  busy: (code) => BUSY.has(code),
}
