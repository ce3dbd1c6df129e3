/**
 * `postgresStore`: pets in a PostgreSQL database, through `pg`.
 *
 * @module
 */
import { PostgresDialect, type PostgresPool } from 'kysely'
import type { Pool, PoolClient, PoolConfig } from 'pg'
import { kindOf, optionsObject } from '../../util/option-checks.js'
import type { ResettablePetStore } from '../store.js'
import { postgresHotPath } from './dialects/postgres.js'
import { loadDriver, pooledStore } from './sql-store.js'
import type { KyselyStoreOptions } from './store-options.js'
import { connectionOf, sqlStoreOptions, timeoutMs } from './store-options.js'

/**
 * Where the store connects: a URL, for a pool the store creates (with any
 * other `pg.Pool` setting beside it), or a pool your application owns (and
 * nothing beside it). The timeouts the store sets a default for,
 * `connectionTimeoutMillis`, `statement_timeout` and `query_timeout`, are
 * whole numbers of ms from 0 (no timeout) to 2147483647.
 */
export type PostgresConnection = ({ connectionString: string } & Omit<PoolConfig, 'connectionString'>) | { pool: Pool }

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions extends Omit<KyselyStoreOptions, 'destroyOnClose'> {
  /**
   * PostgreSQL schema of the tables, created on first use if missing (that needs the
   * CREATE privilege on the database; without it, create the schema beforehand).
   * @default the connection's current schema (the first of its `search_path`, usually `public`)
   */
  schema?: string | undefined
}

/**
 * What a pool created by the store uses unless the connection says otherwise: a dead server
 * answers 503 within seconds instead of leaving requests waiting for ever.
 */
const POOL_DEFAULTS = {
  /** Longest wait for a connection, new or free in the pool. */
  connectionTimeoutMillis: 5_000,
  /** Longest a statement may run before the server cancels it (a lock held elsewhere, an overloaded server). */
  statement_timeout: 10_000,
  /** Longest the client waits for an answer, for a server that went silent without closing the connection. */
  query_timeout: 15_000,
  /** Lets the operating system notice dead peers on idle connections. */
  keepAlive: true,
} satisfies PoolConfig

function ignoreError(): void {
  // The failure is the next query's to report (as 503): nothing to do with it here.
}

/**
 * Lends kysely the connections of `pool`, and ends the pool on destroy only when the store owns it.
 * A connection that breaks while lent out emits `error` on its client, where pg-pool listens only
 * while the client is idle: without a listener of our own, the query would fail *and* the
 * process would crash on an unhandled `error` event.
 */
function lend(pool: Pool, owned: boolean): PostgresPool {
  return {
    async connect() {
      const client: PoolClient = await pool.connect()
      if (!client.listeners('error').includes(ignoreError)) client.on('error', ignoreError)
      return client
    },
    end: async () => {
      if (owned) await pool.end()
    },
  }
}

async function createPool(config: PoolConfig): Promise<Pool> {
  const { Pool } = (await loadDriver('postgresStore', 'pg', () => import('pg'))).default
  const pool = new Pool({ ...POOL_DEFAULTS, ...config })
  // An idle connection the server drops is reported here; unheard, it would end the program.
  pool.on('error', ignoreError)
  return pool
}

/** The pg settings the store gives a default (see POOL_DEFAULTS): timeouts in ms, 0 for none. */
const TIMEOUTS = ['connectionTimeoutMillis', 'statement_timeout', 'query_timeout'] as const

/** The options {@link postgresStore} takes. */
const OPTIONS = ['schema', 'table', 'migrationTable', 'batchCreates'] as const

/** Throws unless `pool` is a pg.Pool. */
function checkPool(pool: unknown): void {
  const given = pool as Partial<Record<'connect' | 'query' | 'escapeIdentifier' | 'totalCount', unknown>> | null
  if (typeof given?.connect !== 'function' || typeof given.query !== 'function') {
    throw new TypeError(`postgresStore: pool must be a pg.Pool, with connect() and query(), got ${kindOf(pool)}`)
  }
  // A pg.Client has both, but its connect() opens itself instead of lending a client.
  if (typeof given.escapeIdentifier === 'function' && !('totalCount' in given)) {
    throw new TypeError('postgresStore: pool is a pg.Client, one connection: pass a pg.Pool')
  }
}

/** Throws unless `connection` is a {@link PostgresConnection}. */
function checkConnection(connection: PostgresConnection): void {
  // An empty config is pg's own default: it reads PGHOST, PGUSER… from the environment.
  const config = connectionOf('postgresStore', connection, {
    urlName: 'connectionString',
    meant: { url: 'connectionString', uri: 'connectionString' },
    storeOptions: OPTIONS,
    // pg also reads a socket's directory (`/var/run/postgresql db`) and `socket:` URLs.
    schemes: ['postgres://', 'postgresql://', 'socket:', '/'],
    checkPool,
  })
  for (const name of TIMEOUTS) {
    const value = config?.[name]
    // pg's own word for no statement timeout.
    if (value === undefined || (value === false && name === 'statement_timeout')) continue
    timeoutMs('postgresStore', name, value)
  }
}

/**
 * A store in a PostgreSQL database. `pg` is loaded on first use, so importing
 * this module costs nothing until then; pg's global type parsers are left
 * alone (int8 ids arrive as strings and become numbers here).
 *
 * With a `connectionString` the store creates its pool and `close()` ends
 * it. Unless set beside the URL, that pool waits at most 5 s for a
 * connection (`connectionTimeoutMillis`), lets a statement run 10 s
 * (`statement_timeout`) and waits 15 s for an answer (`query_timeout`): a
 * database that is away costs a request a 503, never a hang.
 *
 * A `pool` you pass stays yours: open after `close()`, its settings as they
 * are. Listen for its `error` events yourself, as pg asks of every pool
 * (an idle connection the server drops is reported there); the store only
 * adds a listener to each connection it borrows, so that one breaking
 * mid-query cannot bring the program down.
 *
 * @example
 * ```ts
 * import { postgresStore } from 'petstore-server/postgres'
 *
 * const store = postgresStore({ connectionString: 'postgres://app@localhost/app', max: 20 }, { schema: 'pets' })
 * ```
 */
export function postgresStore(connection: PostgresConnection, options: PostgresStoreOptions = {}): ResettablePetStore {
  checkConnection(connection)
  optionsObject('postgresStore', 'options', options, "{ schema: 'pets' }")
  if ('queryTimeoutMillis' in options) {
    throw new TypeError(
      'postgresStore: unknown option "queryTimeoutMillis": pg\'s timeouts go with the connection, as query_timeout and statement_timeout',
    )
  }
  sqlStoreOptions('postgresStore', options, OPTIONS)
  const { store, pool } = pooledStore('postgresStore', options, {
    given: 'pool' in connection ? connection.pool : undefined,
    create: () => createPool(connection as PoolConfig),
    lend,
    dialect: (pool) => new PostgresDialect({ pool }),
    // Named statements on the pool, not through kysely: see dialects/postgres.ts for why.
    // pool.query listens for a connection's `error` while it holds it, as lend() does for kysely.
    open: (pool, target) => postgresHotPath((statement) => pool.query(statement), target),
  })
  // For the binary's metrics (`petstore_db_pool_connections`): pg.Pool's own counts, once the pool is open.
  const poolStats = (): PoolStats | undefined => {
    const open = pool()
    return open && { total: open.totalCount, idle: open.idleCount, waiting: open.waitingCount }
  }
  return Object.assign(store, { poolStats })
}

/** Connections of a store's pool: all of them, the idle ones, and the callers waiting for one. */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}
