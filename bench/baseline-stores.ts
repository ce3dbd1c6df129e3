// Hand-written stores for the baseline server: the straightforward data
// structures and SQL a developer would write without a framework.
import Database from 'better-sqlite3'
import type { Pool as MysqlPool, ResultSetHeader, RowDataPacket } from 'mysql2/promise'
import type { Pool as PgPool } from 'pg'

export const STATUSES = ['available', 'pending', 'sold'] as const
export type Status = (typeof STATUSES)[number]

export interface Pet {
  id: number
  name: string
  categoryId: number
  status?: Status
}

export interface NewPet {
  name: string
  categoryId: number
  status?: Status
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
  /** pg returns int8 (bigserial, bigint) as strings; the others return numbers. */
  id: number | string
  name: string
  category_id: number | string
  status: string | null
}

function rowToPet(row: PetRow): Pet {
  const pet: Pet = { id: Number(row.id), name: row.name, categoryId: Number(row.category_id) }
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
  private readonly insert: Database.Statement<[string, number, Status | null]>

  constructor(path: string) {
    this.db = new Database(path)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('busy_timeout = 5000')
    // As the library's sqliteStore: without it SQLite fsyncs every commit and create measures the disk.
    this.db.pragma('synchronous = NORMAL')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS pets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL,
        status TEXT
      );
      CREATE INDEX IF NOT EXISTS pets_status_id ON pets (status, id);
    `)
    const columns = 'SELECT id, name, category_id, status FROM pets'
    this.listAll = this.db.prepare(`${columns} WHERE id > ? ORDER BY id LIMIT ?`)
    this.listByStatus = this.db.prepare(`${columns} WHERE status = ? AND id > ? ORDER BY id LIMIT ?`)
    this.getById = this.db.prepare(`${columns} WHERE id = ?`)
    this.insert = this.db.prepare('INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)')
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

// The SQL servers' stores below create and read their own table, BASELINE_TABLE,
// laid out as the library's (same columns, types and (status, id) index), so
// the benchmark can run both servers in one schema or database. Pool size and
// timeouts are the library's defaults too, so a ratio measures code, not settings.
//
// Creates hold a lock from the id's allocation to the commit, as the library's
// SQL stores do: PostgreSQL and MySQL hand out ids before commit, so without it
// concurrent inserts could commit id 34 before 33 and a client paging by id
// could pass 33 before it exists. That costs round trips and serializes
// creates; a baseline without it would make the create ratio compare different
// guarantees rather than code.

const BASELINE_TABLE = 'baseline_pets'
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
  static async open(url: string): Promise<PostgresStore> {
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
    const table = schema === undefined ? quote(BASELINE_TABLE) : `${quote(schema)}.${quote(BASELINE_TABLE)}`
    if (schema !== undefined) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`)
    await pool.query(`
      CREATE TABLE IF NOT EXISTS ${table} (
        id bigserial PRIMARY KEY,
        name text NOT NULL,
        category_id bigint NOT NULL,
        status varchar(16)
      )`)
    await pool.query(`CREATE INDEX IF NOT EXISTS ${quote(`${BASELINE_TABLE}_status_id`)} ON ${table} (status, id)`)
    return new PostgresStore(pool, table, `petstore-baseline:${schema ?? ''}.${BASELINE_TABLE}`)
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
    private readonly lockName: string,
  ) {}

  /** The table goes into the database `url` names. */
  static async open(url: string): Promise<MysqlStore> {
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
      CREATE TABLE IF NOT EXISTS ${BASELINE_TABLE} (
        id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
        name varchar(255) NOT NULL,
        category_id bigint NOT NULL,
        status varchar(16),
        INDEX ${BASELINE_TABLE}_status_id (status, id)
      ) DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
    const database = decodeURIComponent(new URL(url).pathname.slice(1))
    return new MysqlStore(pool, `petstore-baseline:${database}.${BASELINE_TABLE}`)
  }

  async list({ afterId, limit, status }: PageQuery): Promise<Pet[]> {
    const [rows] =
      status === undefined
        ? await this.pool.query<(PetRow & RowDataPacket)[]>(
            {
              sql: `SELECT ${PET_COLUMNS} FROM ${BASELINE_TABLE} WHERE id > ? ORDER BY id LIMIT ?`,
              timeout: QUERY_TIMEOUT_MS,
            },
            [afterId, limit],
          )
        : await this.pool.query<(PetRow & RowDataPacket)[]>(
            {
              sql: `SELECT ${PET_COLUMNS} FROM ${BASELINE_TABLE} WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
              timeout: QUERY_TIMEOUT_MS,
            },
            [status, afterId, limit],
          )
    return rows.map(rowToPet)
  }

  async get(id: number): Promise<Pet | undefined> {
    const [rows] = await this.pool.query<(PetRow & RowDataPacket)[]>(
      { sql: `SELECT ${PET_COLUMNS} FROM ${BASELINE_TABLE} WHERE id = ?`, timeout: QUERY_TIMEOUT_MS },
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
            sql: `INSERT INTO ${BASELINE_TABLE} (name, category_id, status) VALUES (?, ?, ?)`,
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
