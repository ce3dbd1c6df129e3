/**
 * A SQLite driver that opens a database on the running Node: node:sqlite on 22 and 24, where the
 * better-sqlite3 addon (built for the Node that installed it) loads but cannot open one.
 */
import { AUTO_ORDER, type LoadedSqliteDriver, loadSqliteDriver } from '../../src/store/sql/sqlite-drivers.js'

/** Whether `driver` loads and opens a database here. */
export async function opensHere(driver: LoadedSqliteDriver['driver']): Promise<boolean> {
  try {
    ;(await loadSqliteDriver([driver])).open(':memory:').close()
    return true
  } catch {
    return false
  }
}

/** The first driver of the automatic order that opens a database here. */
export async function sqliteHere(): Promise<LoadedSqliteDriver> {
  for (const driver of AUTO_ORDER) if (await opensHere(driver)) return loadSqliteDriver([driver])
  throw new Error('no SQLite driver opens a database on this runtime')
}
