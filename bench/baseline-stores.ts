// Hand-written stores for the benchmark's competitors (node:http, Fastify,
// Hono): the straightforward data structures and SQL a developer would write
// without an ORM. Each competitor keeps its pets in a table of its own
// (baseline_pets, fastify_pets, hono_pets), so all can share one schema or
// database beside the library's petstore_pets.
import Database from 'better-sqlite3'
import type { Pool as MysqlPool, ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import type { Pool as PgPool } from 'pg'

export const STATUSES = ['available', 'pending', 'sold'] as const
export type Status = (typeof STATUSES)[number]

/** An int64: a number within ±(2^53−1), a bigint beyond (as the library's `Int64`). */
export type Int64 = number | bigint

export interface Pet {
  id: number
  name: string
  categoryId: Int64
  status?: Status
}

export interface NewPet {
  name: string
  categoryId: Int64
  status?: Status
}

/** An int8 as a driver returns it (pg: text; mysql2: text beyond 2^53; SQLite here: read as text). */
function int64Of(value: number | string): Int64 {
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : BigInt(value)
}

export interface PageQuery {
  /** Only pets with an id greater than this (0 = from the start). */
  afterId: number
  /** Page size; callers ask for one extra row to learn whether a next page exists. */
  limit: number
  status?: Status
}

/** Memory and SQLite answer at once; PostgreSQL and MySQL through a promise. */
export type Awaitable<T> = T | Promise<T>

export interface Store {
  list(query: PageQuery): Awaitable<Pet[]>
  get(id: number): Awaitable<Pet | undefined>
  create(pet: NewPet): Awaitable<Pet>
  close(): Awaitable<void>
}

export function isStatus(value: unknown): value is Status {
  return typeof value === 'string' && (STATUSES as readonly string[]).includes(value)
}

/**
 * Pets by id plus one id-ordered array for all pets and one per status.
 * Ids only grow and pets are never deleted, so the arrays stay sorted by
 * appending, and a page is a binary search for the cursor then a slice.
 */
export class MemoryStore implements Store {
  private readonly byId = new Map<number, Pet>()
  private readonly all: Pet[] = []
  private readonly byStatus = new Map<Status, Pet[]>(STATUSES.map((s) => [s, []]))
  private lastId = 0

  list({ afterId, limit, status }: PageQuery): Pet[] {
    const pets = status === undefined ? this.all : (this.byStatus.get(status) ?? [])
    const start = firstIndexAfter(pets, afterId)
    return pets.slice(start, start + limit)
  }

  get(id: number): Pet | undefined {
    return this.byId.get(id)
  }

  create(input: NewPet): Pet {
    this.lastId += 1
    const pet: Pet = { id: this.lastId, name: input.name, categoryId: input.categoryId }
    if (input.status !== undefined) pet.status = input.status
    this.byId.set(pet.id, pet)
    this.all.push(pet)
    if (pet.status !== undefined) this.byStatus.get(pet.status)?.push(pet)
    return pet
  }

  close(): void {}
}

/** Index of the first pet whose id is greater than `afterId` (pets sorted by id). */
function firstIndexAfter(pets: readonly Pet[], afterId: number): number {
  let lo = 0
  let hi = pets.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const pet = pets[mid]
    if (pet !== undefined && pet.id <= afterId) lo = mid + 1
    else hi = mid
  }
  return lo
}

interface PetRow {
  /** pg returns int8 (bigserial, bigint) as strings; the others return numbers (or text: category_id below). */
  id: number | string
  name: string
  category_id: number | string
  status: string | null
}

function rowToPet(row: PetRow): Pet {
  const pet: Pet = { id: Number(row.id), name: row.name, categoryId: int64Of(row.category_id) }
  if (isStatus(row.status)) pet.status = row.status
  return pet
}

function newPet(id: number | string, input: NewPet): Pet {
  const pet: Pet = { id: Number(id), name: input.name, categoryId: input.categoryId }
  if (input.status !== undefined) pet.status = input.status
  return pet
}

/** better-sqlite3 used directly: one table, one index, prepared statements. */
export class SqliteStore implements Store {
  private readonly db: Database.Database
  private readonly listAll: Database.Statement<[number, number], PetRow>
  private readonly listByStatus: Database.Statement<[Status, number, number], PetRow>
  private readonly getById: Database.Statement<[number], PetRow>
  private readonly insert: Database.Statement<[string, Int64, Status | null]>

  constructor(path: string, table: string) {
    this.db = new Database(path)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('busy_timeout = 5000')
    // As the library's sqliteStore: without it SQLite fsyncs every commit and create measures the disk.
    this.db.pragma('synchronous = NORMAL')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS ${table} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL,
        status TEXT
      );
      CREATE INDEX IF NOT EXISTS ${table}_status_id ON ${table} (status, id);
    `)
    // category_id as text: better-sqlite3 would round an INTEGER beyond 2^53 to a number.
    const columns = `SELECT id, name, CAST(category_id AS TEXT) AS category_id, status FROM ${table}`
    this.listAll = this.db.prepare(`${columns} WHERE id > ? ORDER BY id LIMIT ?`)
    this.listByStatus = this.db.prepare(`${columns} WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
    this.getById = this.db.prepare(`${columns} WHERE id = ?`)
    this.insert = this.db.prepare(`INSERT INTO ${table} (name, category_id, status) VALUES (?, ?, ?)`)
  }

  list({ afterId, limit, status }: PageQuery): Pet[] {
    const rows = status === undefined ? this.listAll.all(afterId, limit) : this.listByStatus.all(status, afterId, limit)
    return rows.map(rowToPet)
  }

  get(id: number): Pet | undefined {
    const row = this.getById.get(id)
    return row === undefined ? undefined : rowToPet(row)
  }

  create(input: NewPet): Pet {
    const { lastInsertRowid } = this.insert.run(input.name, input.categoryId, input.status ?? null)
    return newPet(Number(lastInsertRowid), input)
  }

  close(): void {
    this.db.close()
  }
}

// The SQL servers' stores below create and read the table they are given,
// laid out as the library's (same columns, types and (status, id) index), so
// the benchmark can run every server in one schema or database. Pool size and
// timeouts are the library's defaults too, so a ratio measures code, not settings.
//
// Creates hold a lock from the id's allocation to the commit, as the library's
// SQL stores do: PostgreSQL and MySQL hand out ids before commit, so without it
// concurrent inserts could commit id 34 before 33 and a client paging by id
// could pass 33 before it exists. That costs round trips and serializes
// creates; a competitor without it would make the create ratio compare different
// guarantees rather than code.

const PET_COLUMNS = 'id, name, category_id, status'
/** Same as the library's pools: at most 10 connections, no request waiting for ever on a dead server. */
const POOL_SIZE = 10
const CONNECT_TIMEOUT_MS = 5_000
const STATEMENT_TIMEOUT_MS = 10_000
const QUERY_TIMEOUT_MS = 15_000

function ignoreError(): void {
  // An idle connection the server dropped: the next query reports it.
}

/** pg (node-postgres) used directly: one pool, parameterized queries, int8 strings turned into numbers. */
export class PostgresStore implements Store {
  private constructor(
    private readonly pool: PgPool,
    private readonly table: string,
    private readonly lockName: string,
  ) {}

  /** `url` may carry `?schema=NAME` (as the library's binary takes it): the table goes there, created if missing. */
  static async open(url: string, name: string): Promise<PostgresStore> {
    const parsed = new URL(url)
    const schema = parsed.searchParams.get('schema') || undefined
    parsed.searchParams.delete('schema')
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({
      connectionString: parsed.href,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
    })
    pool.on('error', ignoreError)
    const quote = (name: string) => `"${name.replaceAll('"', '""')}"`
    const table = schema === undefined ? quote(name) : `${quote(schema)}.${quote(name)}`
    if (schema !== undefined) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`)
    await pool.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        id bigserial PRIMARY KEY,
        name text NOT NULL,
        category_id bigint NOT NULL,
        status varchar(16)
      )`)
    await pool.query(`CREATE INDEX IF NOT EXISTS ${quote(`${name}_status_id`)} ON ${table} (status, id)`)
    return new PostgresStore(pool, table, `petstore-bench:${schema ?? ''}.${name}`)
  }

  async list({ afterId, limit, status }: PageQuery): Promise<Pet[]> {
    const { rows } =
      status === undefined
        ? await this.pool.query<PetRow>(`SELECT ${PET_COLUMNS} FROM ${this.table} WHERE id > $1 ORDER BY id LIMIT $2`, [
            afterId,
            limit,
          ])
        : await this.pool.query<PetRow>(
            `SELECT ${PET_COLUMNS} FROM ${this.table} WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
            [status, afterId, limit],
          )
    return rows.map(rowToPet)
  }

  async get(id: number): Promise<Pet | undefined> {
    const { rows } = await this.pool.query<PetRow>(`SELECT ${PET_COLUMNS} FROM ${this.table} WHERE id = $1`, [id])
    return rows[0] === undefined ? undefined : rowToPet(rows[0])
  }

  /** In a transaction holding an advisory lock until commit, so ids become visible in order (see above). */
  async create(input: NewPet): Promise<Pet> {
    const client = await this.pool.connect()
    let broken = false
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.lockName])
      const { rows } = await client.query<PetRow>(
        `INSERT INTO ${this.table} (name, category_id, status) VALUES ($1, $2, $3) RETURNING id`,
        [input.name, input.categoryId, input.status ?? null],
      )
      await client.query('COMMIT')
      const id = rows[0]?.id
      if (id === undefined) throw new Error('INSERT returned no id')
      return newPet(id, input)
    } catch (error) {
      // A connection that cannot even roll back is dropped rather than returned to the pool.
      await client.query('ROLLBACK').catch(() => {
        broken = true
      })
      throw error
    } finally {
      client.release(broken)
    }
  }

  close(): Promise<void> {
    return this.pool.end()
  }
}

/** mysql2 used directly: one pool, `?` placeholders, exact bigint numbers, utf8mb4 throughout. */
export class MysqlStore implements Store {
  private constructor(
    private readonly pool: MysqlPool,
    private readonly table: string,
    private readonly lockName: string,
  ) {}

  /** The table goes into the database `url` names. */
  static async open(url: string, table: string): Promise<MysqlStore> {
    const { createPool } = await import('mysql2/promise')
    const pool = createPool({
      uri: url,
      connectionLimit: POOL_SIZE,
      connectTimeout: CONNECT_TIMEOUT_MS,
      charset: 'utf8mb4',
      supportBigNumbers: true,
      bigNumberStrings: false,
      enableKeepAlive: true,
    })
    await pool.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
        name varchar(255) NOT NULL,
        category_id bigint NOT NULL,
        status varchar(16),
        INDEX ${table}_status_id (status, id)
      ) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
    const database = decodeURIComponent(new URL(url).pathname.slice(1))
    return new MysqlStore(pool, table, `petstore-bench:${database}.${table}`)
  }

  async list({ afterId, limit, status }: PageQuery): Promise<Pet[]> {
    const [rows] =
      status === undefined
        ? await this.pool.query<(PetRow & RowDataPacket)[]>(
            {
              sql: `SELECT ${PET_COLUMNS} FROM ${this.table} WHERE id > ? ORDER BY id LIMIT ?`,
              timeout: QUERY_TIMEOUT_MS,
            },
            [afterId, limit],
          )
        : await this.pool.query<(PetRow & RowDataPacket)[]>(
            {
              sql: `SELECT ${PET_COLUMNS} FROM ${this.table} WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
              timeout: QUERY_TIMEOUT_MS,
            },
            [status, afterId, limit],
          )
    return rows.map(rowToPet)
  }

  async get(id: number): Promise<Pet | undefined> {
    const [rows] = await this.pool.query<(PetRow & RowDataPacket)[]>(
      { sql: `SELECT ${PET_COLUMNS} FROM ${this.table} WHERE id = ?`, timeout: QUERY_TIMEOUT_MS },
      [id],
    )
    return rows[0] === undefined ? undefined : rowToPet(rows[0])
  }

  /** Under a named lock held on one connection until the autocommitted insert is done (see above). */
  async create(input: NewPet): Promise<Pet> {
    const connection = await this.pool.getConnection()
    try {
      const [locked] = await connection.query<({ got: number | null } & RowDataPacket)[]>(
        { sql: 'SELECT GET_LOCK(SHA1(?), 10) AS got', timeout: QUERY_TIMEOUT_MS },
        [this.lockName],
      )
      if (Number(locked[0]?.got) !== 1) throw new Error('timed out waiting for the insert lock')
      try {
        const [result] = await connection.query<ResultSetHeader>(
          {
            sql: `INSERT INTO ${this.table} (name, category_id, status) VALUES (?, ?, ?)`,
            timeout: QUERY_TIMEOUT_MS,
          },
          [input.name, input.categoryId, input.status ?? null],
        )
        return newPet(result.insertId, input)
      } finally {
        await connection.query({ sql: 'SELECT RELEASE_LOCK(SHA1(?))', timeout: QUERY_TIMEOUT_MS }, [this.lockName])
      }
    } finally {
      connection.release()
    }
  }

  close(): Promise<void> {
    return this.pool.end()
  }
}

/**
 * The store a competitor's `--db` names, its pets in `table` (a plain
 * identifier: it is not quoted everywhere).
 */
export async function openStore(db: string, table: string): Promise<Store> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`table name must be [a-z_]+, got "${table}"`)
  if (db === 'memory') return new MemoryStore()
  if (db.startsWith('sqlite:') && db.length > 'sqlite:'.length)
    return new SqliteStore(db.slice('sqlite:'.length), table)
  if (/^postgres(ql)?:\/\//.test(db)) return PostgresStore.open(db, table)
  if (db.startsWith('mysql://')) return MysqlStore.open(db, table)
  const shown = db.replace(/\/\/[^@/]*@/, '//***@') // never echo credentials
  throw new Error(`--db must be "memory", "sqlite:PATH", "postgres://…" or "mysql://…", got "${shown}"`)
}
