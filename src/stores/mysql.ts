/**
 * `mysqlStore`: pets in a MySQL or MariaDB database, through `mysql2`.
 *
 * @module
 */
import { Kysely, MysqlDialect, type MysqlPool, type MysqlPoolConnection } from 'kysely'
import type { ExecuteValues, Pool, PoolConnection, PoolOptions } from 'mysql2'
import { PetstoreError } from '../errors.js'
import type { PetStore } from '../store.js'
import { HOT_PATH, type HotPathTarget } from './hot-path.js'
import { type KyselyStoreOptions, kyselyStore } from './kysely.js'
import { type MysqlRunner, type MysqlSession, mysqlHotPath } from './mysql-hot-path.js'

/**
 * Where the store connects: a URL, for a pool the store creates (with any
 * other `mysql2` pool setting beside it), or a pool your application owns
 * (the callback pool of `mysql2`'s `createPool`, not `mysql2/promise`).
 */
export type MysqlConnection = ({ uri: string } & Omit<PoolOptions, 'uri'>) | { pool: Pool }

/** Options of {@link mysqlStore}. */
export interface MysqlStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose' | 'schema'> {
  /**
   * Longest the client waits for the answer to a statement; past it the connection is dropped
   * and the request answered 503 (a server that went silent without closing). 0 waits for ever.
   * @default 15000
   */
  queryTimeoutMillis?: number
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

/** `connection`, heard when it fails (see {@link lend}). */
function listened(connection: PoolConnection): PoolConnection {
  if (!connection.listeners('error').includes(ignoreError)) connection.on('error', ignoreError)
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

/** Statements on `connection`, prepared once per connection (`execute`), each bounded by `timeout` as in {@link timed}. */
function executeOn(connection: PoolConnection, timeout: number): MysqlRunner {
  return (sql, values) =>
    new Promise((resolve, reject) => {
      connection.execute(
        { sql, timeout: timeout > 0 ? timeout : undefined },
        values as ExecuteValues[],
        (error, result) => {
          if (error) {
            if ((error as { code?: unknown }).code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy()
            reject(error)
          } else resolve(result)
        },
      )
    })
}

/** One connection of `pool` for the statements of `work`, given back after. */
function sessionOn(pool: Pool, timeout: number): MysqlSession {
  return (work) =>
    new Promise((resolve, reject) => {
      pool.getConnection((error, connection) => {
        if (error) return reject(error)
        work(executeOn(listened(connection), timeout))
          .then(resolve, reject)
          .finally(() => connection.release())
      })
    })
}

async function openPool(options: PoolOptions): Promise<Pool> {
  let createPool: typeof import('mysql2').createPool
  try {
    createPool = (await import('mysql2')).default.createPool
  } catch (cause) {
    throw PetstoreError.missingDriver('mysqlStore needs mysql2: npm install mysql2', cause)
  }
  return createPool({ ...POOL_DEFAULTS, ...options })
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
export function mysqlStore(connection: MysqlConnection, options: MysqlStoreOptions = {}): PetStore {
  const { queryTimeoutMillis = 15_000, ...rest } = options
  /** The pool, once there is one: kysely lends its connections, the hot path executes on them directly. */
  let pool: Pool | undefined = 'pool' in connection ? connection.pool : undefined
  const dialect = new MysqlDialect({
    pool:
      'pool' in connection
        ? lend(connection.pool, false, queryTimeoutMillis)
        : async () => {
            pool = await openPool(connection as PoolOptions)
            return lend(pool, true, queryTimeoutMillis)
          },
  })
  return kyselyStore(new Kysely({ dialect }), {
    ...rest,
    destroyOnClose: true,
    // Prepared statements on the pool, around kysely's builder: see mysql-hot-path.ts for why.
    [HOT_PATH]: (target: HotPathTarget) => {
      const open = pool
      if (open === undefined) throw new Error('mysqlStore: the pool is not open')
      const session = sessionOn(open, queryTimeoutMillis)
      const run: MysqlRunner = (sql, values) => session((on) => on(sql, values))
      return mysqlHotPath(run, session, target, target.system === 'mariadb' ? 'mariadb' : 'mysql')
    },
  } as KyselyStoreOptions)
}
