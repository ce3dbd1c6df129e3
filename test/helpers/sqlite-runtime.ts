/**
 * Runs {@link sqliteRoundTrip} on the runtime that executes this file, for
 * test/sqlite-drivers.test.ts:
 *
 *   node --import tsx test/helpers/sqlite-runtime.ts DIR node:sqlite auto
 *   bun test/helpers/sqlite-runtime.ts DIR bun:sqlite auto
 *
 * Each argument after DIR is a driver, or `auto` for the automatic choice.
 * Prints `{"auto": <driver the automatic choice loads>}` and exits 0 when
 * every round trip passed; an assertion failure exits non-zero.
 */
import { loadSqliteDriver, type SqliteDriver } from '../../src/store/sql/sqlite-drivers.js'
import { sqliteRoundTrip } from './sqlite-roundtrip.js'

const [dir, ...drivers] = process.argv.slice(2)
if (!dir) throw new Error('usage: sqlite-runtime.ts DIR DRIVER|auto...')
for (const driver of drivers) await sqliteRoundTrip(dir, driver === 'auto' ? undefined : (driver as SqliteDriver))
console.log(JSON.stringify({ auto: (await loadSqliteDriver()).driver }))
