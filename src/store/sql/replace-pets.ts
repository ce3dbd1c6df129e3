/**
 * Test control for the SQL stores: every pet replaced by a seed in one
 * transaction, the idempotency keys dropped, with the ids given, and the id counter moved to follow the
 * highest (PostgreSQL `setval`, MySQL `AUTO_INCREMENT`, SQLite's
 * `sqlite_sequence`). What `seed()` loads and `reset()` puts back.
 *
 * @module
 */
import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely'
import type { Pet } from '../../api/schemas.js'
import { PetstoreError } from '../../shared/petstore-error.js'
import { insertLockName, MYSQL_LOCK } from './hot-path.js'
import type { SqlFamily } from './migrations.js'
import { rowOf } from './pet-columns.js'
import { generationTable, keysTable } from './schema-history.js'

/** Rows per insert: well within every driver's limit on bound parameters. */
const CHUNK = 200

/** Where the pets are: the family, the table, its schema. */
export interface PetsTable {
  family: SqlFamily
  table: string
  schema: string | undefined
}

/**
 * Deletes every pet of `where`, inserts `pets` (ascending ids) and sets the id counter so that the
 * next create gets the id after the highest (1 when `pets` is empty). With `claim`, its work runs
 * first in the same transaction, and the pets are replaced only when it answers `true`: a new
 * namespace is recorded and seeded at once, by the one process that recorded it.
 *
 * @example
 * ```ts
 * await replacePets(db, { family: 'postgres', table: 'pets', schema: 'public' }, seedRecords(pets))
 * ```
 */
export async function replacePets(
  db: Kysely<any>,
  where: PetsTable,
  pets: readonly Pet[],
  claim?: (trx: Transaction<any>) => Promise<boolean>,
): Promise<boolean> {
  if (where.family !== 'mysql') return db.transaction().execute((trx) => replaceIn(trx, where, pets, claim))
  // MySQL moves the counter with DDL, which commits by itself: after the transaction. A create
  // committed in between would keep the old counter (ids going on from 500, not 101). So the
  // reset holds the insert lock every create takes (see insertLockName), on one connection,
  // from before the transaction until the counter is moved. Below the highest id, InnoDB takes max(id) + 1.
  return db.connection().execute(async (connection) => {
    const lock = insertLockName(where)
    const { rows } = await connection.executeQuery<{ got: unknown }>(CompiledQuery.raw(MYSQL_LOCK.take, [lock]))
    if (Number(rows[0]?.got) !== 1) throw PetstoreError.unavailable(new Error('timed out waiting for the insert lock'))
    try {
      const replaced = await connection.transaction().execute((trx) => replaceIn(trx, where, pets, claim))
      if (replaced) await sql`alter table ${sql.table(qualified(where))} auto_increment = 1`.execute(connection)
      return replaced
    } finally {
      await connection.executeQuery(CompiledQuery.raw(MYSQL_LOCK.release, [lock]))
    }
  })
}

/** `schema.table`, or `table`, as kysely's `sql.table` takes it. */
const qualified = ({ schema, table }: PetsTable) => (schema ? `${schema}.${table}` : table)

/** The transaction of {@link replacePets}: `false` when `claim` says another process got there first. */
async function replaceIn(
  trx: Transaction<any>,
  where: PetsTable,
  pets: readonly Pet[],
  claim: ((trx: Transaction<any>) => Promise<boolean>) | undefined,
): Promise<boolean> {
  const { family, table, schema } = where
  if (claim !== undefined && !(await claim(trx))) return false
  const target = schema ? trx.withSchema(schema) : trx
  // No create commits in between: it would take an id the seed is about to hold.
  if (family === 'postgres') await sql`lock table ${sql.table(qualified(where))} in exclusive mode`.execute(trx)
  // A key names a pet: with the pets gone, a retry must create again.
  await target.deleteFrom(keysTable({ table, schema }).table).execute()
  await target.deleteFrom(table).execute()
  // AUTOINCREMENT never goes below its sqlite_sequence row: gone, it follows max(id) again.
  if (family === 'sqlite') await sql`delete from sqlite_sequence where name = ${table}`.execute(trx)
  for (let start = 0; start < pets.length; start += CHUNK) {
    const rows = pets.slice(start, start + CHUNK).map(rowOf)
    await target.insertInto(table).values(rows).execute()
  }
  // A new generation: cursors issued before are refused from the commit on (see generationTable).
  await (schema ? trx.withSchema(schema) : trx)
    .updateTable(generationTable({ table, schema }).table)
    .set((eb) => ({ generation: eb('generation', '+', 1) }))
    .execute()
  if (family === 'postgres') {
    const lastId = pets.at(-1)?.id ?? 0
    const quoted = schema ? `"${schema.replaceAll('"', '""')}"."${table}"` : `"${table}"`
    await sql`select setval(pg_get_serial_sequence(${quoted}, 'id'), ${Math.max(lastId, 1)}, ${lastId > 0})`.execute(
      trx,
    )
  }
  return true
}
