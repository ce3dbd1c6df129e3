// Filling a database with `size` pets in one statement, for the scale benchmarks: a million
// create() calls would take minutes. The table must exist (the store's Migrator makes it).
// Statuses cycle available, pending, sold, none, so a quarter of the pets has each.

/** Fills the SQLite file at `path` (its `petstore_pets` table made already), from a connection of its own. */
export async function seedSqlite(path: string, size: number): Promise<void> {
  const { loadSqliteDriver } = await import('../src/store/sql/sqlite-drivers.js')
  const { open } = await loadSqliteDriver()
  const database = open(path)
  try {
    database
      .prepare(`with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
        insert into petstore_pets (name, category_id, status)
        select 'pet ' || i, i, case i % 4 when 1 then 'available' when 2 then 'pending' when 3 then 'sold' end from n`)
      .run([size])
  } finally {
    database.close()
  }
}

/** Fills `schema`.petstore_pets through `query` (a pg client's or pool's), then refreshes the planner's statistics. */
export async function seedPostgres(
  query: (statement: string, values?: unknown[]) => Promise<unknown>,
  schema: string,
  size: number,
): Promise<void> {
  await query(
    `insert into "${schema}".petstore_pets (name, category_id, status)
    select 'pet ' || i, i, (array['available', 'pending', 'sold'])[i % 4] from generate_series(1, $1::int) as i`,
    [size],
  )
  await query(`analyze "${schema}".petstore_pets`)
}
