// Hand-written stores for the baseline server: the straightforward data
// structures and SQL a developer would write without a framework.
import Database from 'better-sqlite3'

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

export interface Store {
  list(query: PageQuery): Pet[]
  get(id: number): Pet | undefined
  create(pet: NewPet): Pet
  close(): void
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
  id: number
  name: string
  category_id: number
  status: string | null
}

function rowToPet(row: PetRow): Pet {
  const pet: Pet = { id: row.id, name: row.name, categoryId: row.category_id }
  if (isStatus(row.status)) pet.status = row.status
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
    const pet: Pet = { id: Number(lastInsertRowid), name: input.name, categoryId: input.categoryId }
    if (input.status !== undefined) pet.status = input.status
    return pet
  }

  close(): void {
    this.db.close()
  }
}
