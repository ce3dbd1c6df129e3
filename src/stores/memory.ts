/**
 * `memoryStore`: pets in process memory. For tests, demos and one-process
 * servers; nothing survives a restart.
 *
 * @module
 */
import type { NewPet, Pet, PetStatus } from '../schemas.js'
import type { ListQuery, PetStore } from '../store.js'

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Pets to start with. Those with an `id` keep it; the others get the next
   * ids in order. @default []
   */
  pets?: ReadonlyArray<NewPet | Pet>
}

/** Index of the first pet in `sorted` (ascending ids) whose id is greater than `after`. */
function firstAfter(sorted: readonly Pet[], after: number): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((sorted[mid] as Pet).id <= after) low = mid + 1
    else high = mid
  }
  return low
}

/** A frozen copy holding only the Pet fields, so callers can neither add nor change what is stored. */
function freeze(id: number, pet: NewPet): Pet {
  const stored: Pet = { id, name: pet.name, categoryId: pet.categoryId }
  if (pet.status !== undefined) stored.status = pet.status
  return Object.freeze(stored)
}

/**
 * A store in memory. Ids only grow, so every list below is sorted by
 * appending: a page is a binary search plus a slice, O(log n + limit),
 * filtered by status or not.
 *
 * @example
 * ```ts
 * const store = memoryStore({ pets: [{ name: 'Rex', categoryId: 1, status: 'available' }] })
 * const handler = createPetstore({ store, keys: ['secret'] })
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): PetStore {
  const byId = new Map<number, Pet>()
  const all: Pet[] = []
  const byStatus: Record<PetStatus, Pet[]> = { available: [], pending: [], sold: [] }
  let lastId = 0

  const add = (pet: Pet) => {
    byId.set(pet.id, pet)
    all.push(pet)
    if (pet.status !== undefined) byStatus[pet.status].push(pet)
    lastId = pet.id
  }

  const seeded = options.pets ?? []
  const withIds = seeded.filter((pet): pet is Pet => 'id' in pet && pet.id !== undefined)
  for (const pet of [...withIds].sort((a, b) => a.id - b.id)) {
    if (!Number.isSafeInteger(pet.id) || pet.id < 1 || byId.has(pet.id)) {
      throw new TypeError(`memoryStore: seeded pet ids must be unique positive integers, got ${pet.id}`)
    }
    add(freeze(pet.id, pet))
  }
  for (const pet of seeded) if (!withIds.includes(pet as Pet)) add(freeze(lastId + 1, pet))

  return {
    async create(pet) {
      const stored = freeze(lastId + 1, pet)
      add(stored)
      return stored
    },
    async get(id) {
      return byId.get(id)
    },
    async list({ status, limit, after }: ListQuery) {
      const source = status === undefined ? all : byStatus[status]
      const start = after === undefined ? 0 : firstAfter(source, after)
      return source.slice(start, start + limit)
    },
    async ping() {},
    async close() {},
  }
}
