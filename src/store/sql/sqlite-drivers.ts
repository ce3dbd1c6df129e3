/**
 * The SQLite drivers `sqliteStore` can run on, each opened as the
 * better-sqlite3-shaped database kysely's `SqliteDialect` expects.
 *
 * This is the one file of src/ that names runtime modules (`node:sqlite`,
 * `bun:sqlite`), and only in dynamic imports: nothing is loaded before a store
 * opens its database, and a runtime without a driver never sees its import
 * (test/core-purity.test.ts keeps it that way).
 *
 * @module
 */
import type { SqliteDatabase, SqliteStatement } from 'kysely'
import { PetstoreError } from '../../shared/petstore-error.js'

/** A SQLite driver `sqliteStore` can use. */
export type SqliteDriver = 'better-sqlite3' | 'node:sqlite' | 'bun:sqlite'

/**
 * The automatic choice, first loadable wins: the runtime's own driver (Bun's,
 * then Node's, which Deno provides too) needs no install, so it goes before
 * the native addon. `bun:sqlite` fails to import anywhere but Bun, and
 * `node:sqlite` on Node < 22.5 (and < 22.13 without `--experimental-sqlite`).
 */
export const AUTO_ORDER: readonly SqliteDriver[] = ['bun:sqlite', 'node:sqlite', 'better-sqlite3']

/**
 * A statement as kysely's `SqliteDialect` runs it, and `get`: the first row, or `undefined`
 * (better-sqlite3's own), for the hot path's one-row reads without an array of rows around them.
 */
export interface DriverStatement extends SqliteStatement {
  get(parameters: ReadonlyArray<unknown>): unknown
}

/**
 * A query whose rows are read as arrays of their column values, in the order the query selects
 * them. better-sqlite3 makes a row object by setting its keys one by one, each key's name made
 * again for every row; an array of values costs far less.
 */
export interface ValuesStatement {
  /** The first row's values, or `undefined`. Only for queries of at most one row (Bun reads them all). */
  get(parameters: ReadonlyArray<unknown>): unknown[] | undefined
  /** Every row's values. */
  all(parameters: ReadonlyArray<unknown>): unknown[][]
}

/** A database as kysely's `SqliteDialect` takes it, whose statements have {@link DriverStatement}'s `get`. */
export interface DriverDatabase extends SqliteDatabase {
  prepare(sql: string): DriverStatement
  /** A query read as arrays (see {@link ValuesStatement}), for the hot path; kysely never asks for one. */
  prepareValues(sql: string): ValuesStatement
}

/** Opens a database file (or `':memory:'`) with one driver. */
type Opener = (path: string) => DriverDatabase

// The runtime modules are typed here by the few members we use: @types/node 20
// has no node:sqlite and there is no bun:sqlite declaration to depend on.
// `as string` keeps TypeScript from resolving them; bundlers still see the literal.
// (`any` only where a module enters its adapter, typed by the adapter's parameter.)

/** A node:sqlite statement, by the members used here. */
export interface NodeStatement {
  all(...parameters: unknown[]): Record<string, unknown>[]
  get(...parameters: unknown[]): Record<string, unknown> | undefined
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint }
  /** Node ≥ 22.13 / 23.4. */
  iterate?(...parameters: unknown[]): IterableIterator<Record<string, unknown>>
  /** Node ≥ 22.16 / 23.11. */
  columns?(): unknown[]
  /** Node 24 (added in 24.0.0; 22.23 has it too, earlier Node 22 releases may not): looked for. */
  setReturnArrays?(enabled: boolean): void
}

interface NodeSqlite {
  DatabaseSync: new (path: string) => { prepare(sql: string): NodeStatement; close(): void }
}

interface BunStatement {
  readonly columnNames: string[]
  all(...parameters: unknown[]): unknown[]
  get(...parameters: unknown[]): unknown
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint }
  iterate(...parameters: unknown[]): IterableIterator<unknown>
  values(...parameters: unknown[]): unknown[][]
}

interface BunSqlite {
  Database: new (path: string) => { prepare(sql: string): BunStatement; close(): void }
}

/** Copies a null-prototype row of node:sqlite into a plain object, as the other drivers return. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  return { ...row }
}

/**
 * A node:sqlite statement read as values: as arrays where it can return them (`setReturnArrays`),
 * else its row objects' values, whose keys are in the order selected.
 *
 * @example
 * ```ts
 * nodeValues(database.prepare('select 1 as one, 2 as two')).get([]) // → [1, 2]
 * ```
 */
export function nodeValues(statement: Pick<NodeStatement, 'get' | 'all' | 'setReturnArrays'>): ValuesStatement {
  if (statement.setReturnArrays) {
    statement.setReturnArrays(true)
    // Rows are arrays from here on.
    return {
      get: (parameters) => statement.get(...parameters) as unknown[] | undefined,
      all: (parameters) => statement.all(...parameters) as unknown as unknown[][],
    }
  }
  return {
    get: (parameters) => {
      const row = statement.get(...parameters)
      return row === undefined ? undefined : Object.values(row)
    },
    all: (parameters) => statement.all(...parameters).map((row) => Object.values(row)),
  }
}

/**
 * Whether `sql` returns rows, judged from its text. Only for node:sqlite
 * before `columns()` (Node < 22.16): a query that returns rows must be read
 * with `all()`, anything else run with `run()` for its changes and rowid.
 *
 * @example
 * ```ts
 * returnsRows('insert into t (a) values (?) returning id') // → true
 * ```
 */
export function returnsRows(sql: string): boolean {
  const text = sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ').trimStart()
  return /^\(*\s*(select|with|values|pragma|explain)\b/i.test(text) || /\breturning\b/i.test(text)
}

/**
 * Imports a driver's module. The imports sit in a try block on purpose:
 * esbuild (our build, and users' bundles of it) then leaves an import it
 * cannot resolve, such as `bun:sqlite` outside Bun, to run time instead of
 * failing the build; `webpackIgnore` asks the same of webpack.
 */
async function importDriver(driver: SqliteDriver): Promise<unknown> {
  try {
    switch (driver) {
      case 'better-sqlite3':
        return (await import('better-sqlite3')).default
      case 'node:sqlite':
        return await import(/* webpackIgnore: true */ 'node:sqlite' as string)
      case 'bun:sqlite':
        return await import(/* webpackIgnore: true */ 'bun:sqlite' as string)
    }
  } catch (cause) {
    throw new Error(`sqliteStore cannot load the driver ${driver}: ${HINTS[driver]}`, { cause })
  }
}

/** Turns each driver's module into an {@link Opener}. */
const ADAPTERS: Record<SqliteDriver, (module: any) => Opener> = {
  // Already the shape kysely was written for; its `get` takes an array of parameters as it is, and
  // its raw mode reads rows as arrays.
  'better-sqlite3': (Database: typeof import('better-sqlite3')) => (path) => {
    const database = new Database(path)
    const prepareValues = (sql: string): ValuesStatement => database.prepare(sql).raw(true) as ValuesStatement
    return Object.assign(database, { prepareValues }) as unknown as DriverDatabase
  },

  'node:sqlite':
    ({ DatabaseSync }: NodeSqlite) =>
    (path) => {
      const database = new DatabaseSync(path)
      return {
        prepare(sql): DriverStatement {
          const statement = database.prepare(sql)
          return {
            reader: statement.columns ? statement.columns().length > 0 : returnsRows(sql),
            all: (parameters) => statement.all(...parameters).map(plain),
            get: (parameters) => {
              const row = statement.get(...parameters)
              return row === undefined ? undefined : plain(row)
            },
            run: (parameters) => statement.run(...parameters),
            *iterate(parameters) {
              const rows = statement.iterate ? statement.iterate(...parameters) : statement.all(...parameters)
              for (const row of rows) yield plain(row)
            },
          }
        },
        prepareValues: (sql) => nodeValues(database.prepare(sql)),
        close: () => database.close(),
      }
    },

  'bun:sqlite':
    ({ Database }: BunSqlite) =>
    (path) => {
      const database = new Database(path)
      return {
        prepare(sql): DriverStatement {
          const statement = database.prepare(sql)
          return {
            reader: statement.columnNames.length > 0,
            all: (parameters) => statement.all(...parameters),
            // bun:sqlite says "no row" with null.
            get: (parameters) => statement.get(...parameters) ?? undefined,
            run: (parameters) => statement.run(...parameters),
            iterate: (parameters) => statement.iterate(...parameters),
          }
        },
        prepareValues(sql): ValuesStatement {
          const statement = database.prepare(sql)
          return {
            get: (parameters) => statement.values(...parameters)[0],
            all: (parameters) => statement.values(...parameters),
          }
        },
        close: () => database.close(),
      }
    },
}

/** Throws a `TypeError` unless `driver` names a driver (the option may come from untyped code or configuration). */
export function assertSqliteDriver(driver: unknown): asserts driver is SqliteDriver {
  if (typeof driver !== 'string' || !Object.hasOwn(ADAPTERS, driver)) {
    const known = Object.keys(ADAPTERS).map((name) => `'${name}'`)
    throw new TypeError(`sqliteStore: unknown driver ${JSON.stringify(driver)}; use one of ${known.join(', ')}`)
  }
}

const HINTS: Record<SqliteDriver, string> = {
  'better-sqlite3': 'npm install better-sqlite3',
  'node:sqlite': 'it needs Node ≥ 22.13 (≥ 22.5 with --experimental-sqlite)',
  'bun:sqlite': 'it exists only under Bun',
}

/** A loaded driver: its name and how it opens a database. */
export interface LoadedSqliteDriver {
  driver: SqliteDriver
  open: Opener
}

/**
 * Loads the first driver of `candidates` that this runtime can import.
 * Only loading falls through to the next one: a driver that loads but then
 * fails to open a file reports that failure.
 *
 * @example
 * ```ts
 * const { driver, open } = await loadSqliteDriver(['node:sqlite', 'better-sqlite3'])
 * const database = open(':memory:')
 * ```
 */
export async function loadSqliteDriver(candidates: readonly SqliteDriver[] = AUTO_ORDER): Promise<LoadedSqliteDriver> {
  for (const driver of candidates) assertSqliteDriver(driver)
  const failures: unknown[] = []
  for (const driver of candidates) {
    let module: unknown
    try {
      module = await importDriver(driver)
    } catch (error) {
      failures.push(error)
      continue
    }
    return { driver, open: ADAPTERS[driver](module) }
  }
  const cause = new AggregateError(failures, 'No SQLite driver could be loaded')
  const [only] = failures
  const message =
    failures.length === 1 && only instanceof Error
      ? only.message
      : 'sqliteStore needs a SQLite driver: npm install better-sqlite3 (or run on Node ≥ 22.13 or Bun)'
  throw PetstoreError.missingDriver(message, cause)
}
