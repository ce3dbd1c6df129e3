/**
 * `mysqlStore`: pets in a MySQL or MariaDB database, through `mysql2`.
 *
 * @module
 */
import { MysqlDialect, type MysqlPool, type MysqlPoolConnection } from 'kysely'
import type { ExecuteValues, Pool, PoolConnection, PoolOptions } from 'mysql2'
import { kindOf, optionsObject } from '../../util/option-checks.js'
import type { ResettablePetStore } from '../store.js'
import { type MysqlRunner, type MysqlSession, mysqlHotPath } from './dialects/mysql.js'
import { loadDriver, pooledStore } from './sql-store.js'
import type { KyselyStoreOptions } from './store-options.js'
import { connectionOf, sqlStoreOptions, timeoutMs } from './store-options.js'

/**
 * Where the store connects: a URL, for a pool the store creates (with any
 * other `mysql2` pool setting beside it; `connectTimeout` a whole number of ms
 * from 0 to 2147483647), or a pool your application owns, and nothing beside it
 * (the callback pool of `mysql2`'s `createPool`, not `mysql2/promise`: a
 * promise pool is refused; its `.pool` is the callback pool).
 */
export type MysqlConnection = ({ uri: string } & Omit<PoolOptions, 'uri'>) | { pool: Pool }

/** Options of {@link mysqlStore}. */
export interface MysqlStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose'> {
  /**
   * Longest the client waits for the answer to a statement; past it the connection is dropped
   * and the request answered 503 (a server that went silent without closing). 0 waits for ever.
   * On the API's reads and creates the bound is kept by one sweep for all statements, a quarter
   * of this apart (at least 10 ms, at most a second), so a statement fails up to that much later.
   * A whole number from 0 to 2147483647. @default 15000
   */
  queryTimeoutMillis?: number | undefined
}

/**
 * What a pool created by the store uses unless the connection says otherwise. The pets table
 * is utf8mb4, and so is the connection; `bigint` columns arrive as exact numbers.
 */
const POOL_DEFAULTS = {
  /** A dead server answers 503 within seconds, not after mysql2's 10 s. */
  connectTimeout: 5_000,
  charset: 'utf8mb4',
  supportBigNumbers: true,
  bigNumberStrings: false,
  enableKeepAlive: true,
} satisfies PoolOptions

function ignoreError(): void {
  // The failure is the next query's to report (as 503): nothing to do with it here.
}

/** Connections known to be heard: asking the emitter copies its listeners, which each statement would pay. */
const heard = new WeakSet<PoolConnection>()

/** `connection`, heard when it fails (see {@link lend}). */
function listened(connection: PoolConnection): PoolConnection {
  if (heard.has(connection)) return connection
  if (!connection.listeners('error').includes(ignoreError)) connection.on('error', ignoreError)
  heard.add(connection)
  return connection
}

/**
 * Lends kysely the connections of `pool`, each statement with a client-side timeout, and ends
 * the pool on destroy only when the store owns it. mysql2 listens only once for a connection's
 * `error` event: a second one, unheard, would crash the process, so the store listens too.
 */
function lend(pool: Pool, owned: boolean, timeout: number): MysqlPool {
  return {
    getConnection(callback) {
      pool.getConnection((error, connection) => {
        if (error) return callback(error, connection)
        callback(null, timed(listened(connection), timeout))
      })
    },
    end(callback) {
      if (owned) pool.end(callback)
      else callback(null)
    },
  }
}

/** `connection`, whose statements time out after `timeout` ms (and then close it: its state is unknown). */
function timed(connection: PoolConnection, timeout: number): MysqlPoolConnection {
  if (timeout <= 0) return connection as unknown as MysqlPoolConnection
  return {
    query: ((sql: string, parameters: unknown[], callback?: (error: unknown, result: unknown) => void) =>
      connection.query(
        { sql, timeout },
        parameters,
        callback &&
          ((error: unknown, result: unknown) => {
            if ((error as { code?: unknown } | null)?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy()
            callback(error, result)
          }),
      )) as MysqlPoolConnection['query'],
    release: () => connection.release(),
  }
}

/** A statement on the hot path, until its answer comes or its time is up. */
interface Pending {
  readonly connection: PoolConnection
  /** The sweep's count when the statement was sent: a small integer, where a clock reading would be a boxed number. */
  readonly sent: number
  readonly fail: (error: Error) => void
}

/** What mysql2's own bound reports, so that a statement timed out here is answered as one timed out there: 503. */
function statementTimeout(): Error {
  return Object.assign(new Error('Query inactivity timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT', fatal: true })
}

/**
 * Bounds the hot path's statements by `timeout` ms with one sweep for all of
 * them, running only while some are out: a statement past its time fails (a
 * 503) and its connection is destroyed, its state being unknown. It fails
 * never earlier than `timeout`, and at most one period of the sweep later (a
 * quarter of `timeout`, at least 10 ms and at most a second). Not mysql2's own bound
 * (`execute({ sql, timeout }, …)`): that form copies its options into a new
 * object for each statement, slow to read all the way down, and sets a timer.
 * On a MySQL get it cost a fifth of the server's CPU (`npm run bench:ab --
 * --at-once`, 6 rounds: 0.808 ± 0.012 without it).
 */
function statementWatch(timeout: number) {
  const pending = new Set<Pending>()
  const period = Math.min(1_000, Math.max(10, Math.floor(timeout / 4)))
  // Sweeps enough that a statement sent just after one has still had its whole time.
  const sweeps = Math.ceil(timeout / period) + 1
  let count = 0
  let timer: ReturnType<typeof setInterval> | undefined
  const sweep = () => {
    count++
    // In the order they were sent: once one is within its time, so are all after it.
    for (const statement of pending) {
      if (count - statement.sent < sweeps) break
      pending.delete(statement)
      statement.connection.destroy()
      statement.fail(statementTimeout())
    }
    if (pending.size === 0) {
      clearInterval(timer)
      timer = undefined
    }
  }
  return {
    sent(connection: PoolConnection, fail: (error: Error) => void): Pending {
      const statement = { connection, sent: count, fail }
      pending.add(statement)
      if (timer === undefined) {
        timer = setInterval(sweep, period)
        // A pending statement must not keep a process alive that has nothing else to do.
        timer.unref?.()
      }
      return statement
    },
    answered(statement: Pending): void {
      pending.delete(statement)
    },
  }
}

type StatementWatch = ReturnType<typeof statementWatch>

/** The answer to one statement, or why there is none: called once. */
type Done = (error: unknown, result?: unknown) => void

/**
 * Runs one statement on `connection`, prepared once per connection, bounded by `watch` if given.
 * The plain form, `execute(sql, values, callback)`: see statementWatch for why not the options form.
 */
function execute(
  connection: PoolConnection,
  watch: StatementWatch | undefined,
  sql: string,
  values: unknown[],
  done: Done,
): void {
  let waiting = true
  let statement: Pending | undefined
  const finish: Done = (error, result) => {
    // Timed out by the sweep: mysql2's late answer, or its error for the destroyed connection, is dropped.
    if (!waiting) return
    waiting = false
    if (statement !== undefined) watch?.answered(statement)
    done(error, result)
  }
  statement = watch?.sent(connection, finish)
  try {
    connection.execute(sql, values as ExecuteValues[], finish)
  } catch (error) {
    // mysql2 throws at once for values it cannot send (undefined, a function).
    finish(error)
  }
}

/** Statements on `connection`, each as {@link execute} runs it. */
function executeOn(connection: PoolConnection, watch: StatementWatch | undefined): MysqlRunner {
  return (sql, values) =>
    new Promise((resolve, reject) => {
      execute(connection, watch, sql, values, (error, result) => {
        if (error) reject(error)
        else resolve(result)
      })
    })
}

/** A bound for the statements of one store: none when `timeout` is 0 (or less). */
const watchFor = (timeout: number) => (timeout > 0 ? statementWatch(timeout) : undefined)

/** One connection of `pool` for the statements of `work`, given back after. */
function sessionOn(pool: Pool, watch: StatementWatch | undefined): MysqlSession {
  return (work) =>
    new Promise((resolve, reject) => {
      pool.getConnection((error, connection) => {
        if (error) return reject(error)
        work(executeOn(listened(connection), watch))
          .then(resolve, reject)
          .finally(() => connection.release())
      })
    })
}

/**
 * One statement on any connection of `pool`: a session of one, without the promises a session
 * chains (two of its three, and a closure), as the get and the page need on every request.
 */
function runOn(pool: Pool, watch: StatementWatch | undefined): MysqlRunner {
  return (sql, values) =>
    new Promise((resolve, reject) => {
      pool.getConnection((error, connection) => {
        if (error) return reject(error)
        execute(listened(connection), watch, sql, values, (failure, result) => {
          connection.release()
          if (failure) reject(failure)
          else resolve(result)
        })
      })
    })
}

async function openPool(options: PoolOptions): Promise<Pool> {
  const { createPool } = (await loadDriver('mysqlStore', 'mysql2', () => import('mysql2'))).default
  return createPool({ ...POOL_DEFAULTS, ...options })
}

/** The options {@link mysqlStore} takes (`schema`: a MySQL database on the same server). */
const OPTIONS = ['table', 'migrationTable', 'schema', 'batchCreates', 'queryTimeoutMillis'] as const

/** Throws unless `pool` is a callback pool of mysql2. */
function checkPool(pool: unknown): void {
  const given = pool as Partial<Record<'getConnection' | 'promise' | 'pool', unknown>> | null
  if (typeof given?.getConnection !== 'function') {
    throw new TypeError(`mysqlStore: pool must be a mysql2 pool, with getConnection(), got ${kindOf(pool)}`)
  }
  // mysql2/promise's pool wraps the callback pool as `.pool`, and has no promise() of its own.
  // Its getConnection() takes no callback: every request would wait for ever.
  if (typeof given.promise !== 'function' && typeof given.pool === 'object' && given.pool !== null) {
    throw new TypeError(
      "mysqlStore: pool is a mysql2/promise pool; pass the callback pool: its .pool, or createPool from 'mysql2'",
    )
  }
}

/** Throws unless `connection` is a {@link MysqlConnection}. */
function checkConnection(connection: MysqlConnection): void {
  const config = connectionOf('mysqlStore', connection, {
    urlName: 'uri',
    meant: { url: 'uri', connectionString: 'uri' },
    storeOptions: OPTIONS,
    // mysql2 reads any scheme, a postgres:// URL too, and connected to MySQL's port of its host.
    schemes: ['mysql://', 'mariadb://'],
    checkPool,
  })
  if (config?.connectTimeout !== undefined) timeoutMs('mysqlStore', 'connectTimeout', config.connectTimeout)
}

/**
 * A store in a MySQL or MariaDB database. `mysql2` is loaded on first use, so
 * importing this module costs nothing until then. With a `uri` the store
 * creates its pool (utf8mb4, exact `bigint`s, 5 s connection timeout) and
 * `close()` ends it; a `pool` you pass stays yours, open after `close()`
 * (keep mysql2's default charset, utf8mb4, for names beyond Latin-1).
 * Either way each statement waits at most `queryTimeoutMillis` for its answer.
 *
 * @example
 * ```ts
 * import { mysqlStore } from 'petstore-server/mysql'
 *
 * const store = mysqlStore({ uri: 'mysql://app:secret@localhost/app', connectionLimit: 20 })
 * ```
 */
export function mysqlStore(connection: MysqlConnection, options: MysqlStoreOptions = {}): ResettablePetStore {
  checkConnection(connection)
  optionsObject('mysqlStore', 'options', options, "{ table: 'pets' }")
  sqlStoreOptions('mysqlStore', options, OPTIONS)
  const { queryTimeoutMillis = 15_000, ...rest } = options
  timeoutMs('mysqlStore', 'queryTimeoutMillis', queryTimeoutMillis)
  return pooledStore('mysqlStore', rest, {
    given: 'pool' in connection ? connection.pool : undefined,
    create: () => openPool(connection as PoolOptions),
    lend: (pool, owned) => lend(pool, owned, queryTimeoutMillis),
    dialect: (pool) => new MysqlDialect({ pool }),
    // Prepared statements on the pool, not through kysely: see dialects/mysql.ts for why.
    open(pool, target) {
      const watch = watchFor(queryTimeoutMillis)
      return mysqlHotPath(runOn(pool, watch), sessionOn(pool, watch), target)
    },
  }).store
}
