// The pets of the lean peers: one store module for all three (the same work
// for each), the data structures and SQL of the library's own stores, written
// directly on the drivers.
//
//   list(after, take, status)      → up to `take` pets with id > after, in id order
//   listJson?(after, limit, status) → { json, lastId, more }: the page as JSON text written by the
//                                    database, as the library's SQLite and PostgreSQL stores do
//   get(id) → pet | undefined;  create({ name, categoryId, status }) → pet;  close()
//
// `sync` is true where the answers are values (memory, SQLite), false where
// they are promises (PostgreSQL, MySQL): a peer awaits only when it must.
import Database from 'better-sqlite3'

const STATUS_INDEX = { available: 0, pending: 1, sold: 2 }

/** A pet as the API has it: no `status` key when there is none. */
function petOf(id, name, categoryId, status) {
  return status === undefined || status === null ? { id, name, categoryId } : { id, name, categoryId, status }
}

/** An int8 as text (SQLite, pg) or a number (mysql2): a number when safe, else a bigint. */
function int64Of(value) {
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : BigInt(value)
}

/** Index of the first pet with id > after, in a list sorted by id. */
function firstAfter(pets, after) {
  let lo = 0
  let hi = pets.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (pets[mid].id <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Pets in one id-ordered array (ids are 1, 2, 3…: a pet's index is its id - 1) and one per status. */
function memoryStore() {
  const all = []
  const byStatus = [[], [], []]
  return {
    sync: true,
    list(after, take, status) {
      const pets = status === undefined ? all : byStatus[STATUS_INDEX[status]]
      const start = after === 0 ? 0 : firstAfter(pets, after)
      return pets.slice(start, start + take)
    },
    get(id) {
      return id >= 1 ? all[id - 1] : undefined
    },
    create({ name, categoryId, status }) {
      const pet = petOf(all.length + 1, name, categoryId, status)
      all.push(pet)
      if (status !== undefined) byStatus[STATUS_INDEX[status]].push(pet)
      return pet
    },
    close() {},
  }
}

/** The JSON text of a page of `limit` from a row aggregating up to `limit + 1` pets (as src/store/sql/hot-path.ts). */
function pageOfJson(json, count, lastId, limit) {
  if (lastId === null || lastId === undefined) return { json: '[]', lastId: undefined, more: false }
  if (Number(count) <= limit) return { json, lastId: Number(lastId), more: false }
  const cut = json.lastIndexOf(',{"id":')
  const start = json.lastIndexOf('{"id":', cut) + 6
  return { json: `${json.slice(0, cut)}]`, lastId: Number(json.slice(start, json.indexOf(',', start))), more: true }
}

const quote = (name) => `"${name.replaceAll('"', '""')}"`

/**
 * better-sqlite3 with the library's pragmas (WAL, synchronous NORMAL, busy
 * timeout), schema and statements (src/store/sql/sqlite-statements.ts), prepared once.
 * Rows are read as arrays (raw mode), as the library reads them: a row object
 * costs better-sqlite3 a runtime property store per column.
 */
function sqliteStore(path, table) {
  const db = new Database(path)
  db.pragma('busy_timeout = 5000')
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  const from = quote(table)
  db.exec(
    `create table if not exists ${from} ("id" integer primary key autoincrement, "name" text not null, "category_id" bigint not null, "status" varchar(16))`,
  )
  // The page by status read from the index alone, as our store's migration 0002 makes it.
  db.exec(
    `create index if not exists ${quote(`${table}_by_status`)} on ${from} ("status", "id", "name", "category_id")`,
  )
  const columns = 'id, name, cast(category_id as text) as category_id, status'
  // The limit is written in, not bound: SQLite expires a statement whose bound LIMIT is bound
  // again, and parses and plans it anew at every run (src/store/sql/sqlite-statements.ts).
  const page = (byStatus, limit, selected) =>
    `select ${selected} from ${from} where ${byStatus ? 'status = ? and ' : ''}id > ? order by id limit ${limit}`
  const PET_JSON = `case when status is null
  then json_object('id', id, 'name', name, 'categoryId', category_id)
  else json_object('id', id, 'name', name, 'categoryId', category_id, 'status', status) end`
  const jsonPage = (byStatus, limit) =>
    `select json_group_array(${PET_JSON}) as json, count(*) as count, max(id) as last_id from (${page(byStatus, limit, 'id, name, category_id, status')})`
  /** One statement per kind and limit, prepared on first use (the bench asks for one or two limits). */
  const statements = (text) => {
    const kept = [new Map(), new Map()]
    return (byStatus, limit) => {
      const byLimit = kept[byStatus ? 1 : 0]
      let statement = byLimit.get(limit)
      if (statement === undefined) {
        statement = db.prepare(text(byStatus, limit)).raw(true)
        byLimit.set(limit, statement)
      }
      return statement
    }
  }
  const rows = statements((byStatus, limit) => page(byStatus, limit, columns))
  const jsons = statements(jsonPage)
  const byId = db.prepare(`select ${columns} from ${from} where id = ?`).raw(true)
  const insert = db.prepare(`insert into ${from} (name, category_id, status) values (?, ?, ?)`)
  // id, name, category_id, status: the order of `columns`.
  const toPet = (row) => petOf(row[0], row[1], int64Of(row[2]), row[3])
  return {
    sync: true,
    list(after, take, status) {
      return (status === undefined ? rows(false, take).all(after) : rows(true, take).all(status, after)).map(toPet)
    },
    listJson(after, limit, status) {
      const row = status === undefined ? jsons(false, limit + 1).get(after) : jsons(true, limit + 1).get(status, after)
      // json, count, last_id: the order of jsonPage's columns.
      return pageOfJson(row?.[0], row?.[1], row?.[2], limit)
    },
    get(id) {
      const row = byId.get(id)
      return row === undefined ? undefined : toPet(row)
    },
    create({ name, categoryId, status }) {
      const id = Number(insert.run(name, categoryId, status ?? null).lastInsertRowid)
      return petOf(id, name, categoryId, status)
    },
    close() {
      db.close()
    },
  }
}

/**
 * pg Pool (the library's size and timeouts) with named statements, so each is
 * parsed and planned once per connection; pages as JSON and the create under the
 * commit-order advisory lock in one statement, as src/store/sql/postgres-hot-path.ts.
 */
async function postgresStore(url, table) {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema') || undefined
  parsed.searchParams.delete('schema')
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({
    connectionString: parsed.href,
    max: 10,
    connectionTimeoutMillis: 5_000,
    statement_timeout: 10_000,
    query_timeout: 15_000,
    keepAlive: true,
  })
  pool.on('error', () => {}) // an idle connection dropped: the next query reports it
  const from = schema === undefined ? quote(table) : `${quote(schema)}.${quote(table)}`
  if (schema !== undefined) await pool.query(`create schema if not exists ${quote(schema)}`)
  await pool.query(
    `create table if not exists ${from} ("id" bigserial primary key, "name" text not null, "category_id" bigint not null, "status" varchar(16))`,
  )
  await pool.query(`create index if not exists ${quote(`${table}_status_id`)} on ${from} ("status", "id")`)
  const lockName = `petstore-peer:${schema ?? ''}.${table}`
  const columns = 'id, name, cast(category_id as text) as category_id, status'
  const where = (byStatus, after) =>
    byStatus ? `status = $1::text and id > ${after}::bigint` : `id > ${after}::bigint`
  const limits = (byStatus) => (byStatus ? ['$2', '$3'] : ['$1', '$2'])
  const PET_JSON = `'{"id":' || id || ',"name":' || to_json(name)::text || ',"categoryId":' || category_id
  || case when status is null then '}' else ',"status":' || to_json(status)::text || '}' end`
  let count = 0
  const named = (text) => ({ name: `${table}_${++count}`, text })
  const rows = [false, true].map((byStatus) => {
    const [after, limit] = limits(byStatus)
    return named(`select ${columns} from ${from} where ${where(byStatus, after)} order by id limit ${limit}::int`)
  })
  const jsons = [false, true].map((byStatus) => {
    const [after, limit] = limits(byStatus)
    return named(`select '[' || coalesce(string_agg(pet, ',' order by id), '') || ']' as json,
        count(*) as count, max(id) as last_id
      from (select id, ${PET_JSON} as pet
        from ${from} where ${where(byStatus, after)} order by id limit ${limit}::int) as page`)
  })
  const byId = named(`select ${columns} from ${from} where id = $1::bigint`)
  const insert = named(`with locked as (select pg_advisory_xact_lock(hashtext($4::text)))
    insert into ${from} (name, category_id, status) select $1::text, $2::bigint, $3::text from locked returning id`)
  const run = (statement, values) => pool.query({ name: statement.name, text: statement.text, values })
  const toPet = (row) => petOf(Number(row.id), row.name, int64Of(row.category_id), row.status)
  return {
    sync: false,
    async list(after, take, status) {
      const result = await run(
        rows[status === undefined ? 0 : 1],
        status === undefined ? [after, take] : [status, after, take],
      )
      return result.rows.map(toPet)
    },
    async listJson(after, limit, status) {
      const values = status === undefined ? [after, limit + 1] : [status, after, limit + 1]
      const result = await run(jsons[status === undefined ? 0 : 1], values)
      const [row] = result.rows
      return pageOfJson(row?.json, row?.count, row?.last_id, limit)
    },
    async get(id) {
      const result = await run(byId, [id])
      return result.rows.length === 0 ? undefined : toPet(result.rows[0])
    },
    async create({ name, categoryId, status }) {
      const result = await run(insert, [name, String(categoryId), status ?? null, lockName])
      return petOf(Number(result.rows[0].id), name, categoryId, status)
    },
    close() {
      return pool.end()
    },
  }
}

/**
 * mysql2 pool (`execute`: prepared statements, cached per connection), the
 * create under a named lock held until the autocommitted insert is done, so ids
 * become visible in order, as the library's MySQL store guarantees.
 */
async function mysqlStore(url, table) {
  const { createPool } = await import('mysql2/promise')
  const pool = createPool({
    uri: url,
    connectionLimit: 10,
    connectTimeout: 5_000,
    charset: 'utf8mb4',
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    // No stack captured per call for errors' sake (mysql2/promise's `trace`, on by default): it was 8.5% of
    // the peer's CPU on a get (--cpu-prof). Our store uses mysql2's callbacks, which capture nothing.
    trace: false,
  })
  const from = `\`${table}\``
  await pool.query(`create table if not exists ${from} (
      id bigint not null auto_increment primary key,
      name varchar(255) not null,
      category_id bigint not null,
      status varchar(16),
      index ${table}_status_id (status, id)
    ) default character set utf8mb4 collate utf8mb4_bin`)
  const database = decodeURIComponent(new URL(url).pathname.slice(1))
  const lockName = `petstore-peer:${database}.${table}`
  const columns = 'id, name, cast(category_id as char) as category_id, status'
  // LIMIT as a parameter of a prepared statement must be a string in mysql2's execute.
  const rows = [
    `select ${columns} from ${from} where id > ? order by id limit ?`,
    `select ${columns} from ${from} where status = ? and id > ? order by id limit ?`,
  ]
  const byId = `select ${columns} from ${from} where id = ?`
  const insert = `insert into ${from} (name, category_id, status) values (?, ?, ?)`
  const toPet = (row) => petOf(Number(row.id), row.name, int64Of(row.category_id), row.status)
  return {
    sync: false,
    async list(after, take, status) {
      const [found] =
        status === undefined
          ? await pool.execute(rows[0], [after, String(take)])
          : await pool.execute(rows[1], [status, after, String(take)])
      return found.map(toPet)
    },
    async get(id) {
      const [found] = await pool.execute(byId, [id])
      return found.length === 0 ? undefined : toPet(found[0])
    },
    async create({ name, categoryId, status }) {
      const connection = await pool.getConnection()
      try {
        const [locked] = await connection.execute('select get_lock(sha1(?), 10) as got', [lockName])
        if (Number(locked[0]?.got) !== 1) throw new Error('timed out waiting for the insert lock')
        try {
          const [result] = await connection.execute(insert, [name, String(categoryId), status ?? null])
          return petOf(Number(result.insertId), name, categoryId, status)
        } finally {
          await connection.execute('select release_lock(sha1(?))', [lockName])
        }
      } finally {
        connection.release()
      }
    },
    close() {
      return pool.end()
    },
  }
}

/** The store `--db` names, its pets in `table` ([a-z_]+). */
export async function openStore(db, table) {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`table name must be [a-z_]+, got "${table}"`)
  if (db === 'memory') return memoryStore()
  if (db.startsWith('sqlite:') && db.length > 7) return sqliteStore(db.slice(7), table)
  if (/^postgres(ql)?:\/\//.test(db)) return postgresStore(db, table)
  if (db.startsWith('mysql://')) return mysqlStore(db, table)
  throw new Error(
    `--db must be "memory", "sqlite:PATH", "postgres://…" or "mysql://…", got "${db.replace(/\/\/[^@/]*@/, '//***@')}"`,
  )
}
