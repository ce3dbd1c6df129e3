/**
 * `memoryStore`: pets in process memory. For tests, demos and one-process
 * servers; nothing survives a restart.
 *
 * @module
 */

import { petRecord } from '../pet-record.js'
import type { NewPet, Pet, PetStatus } from '../schemas.js'
import { type BuiltInStore, builtIn, type ListQuery, NOW, type PetStore, type StoreNow } from '../store.js'

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

/**
 * A frozen copy holding only the Pet fields, so callers can neither add nor change what is stored.
 * {@link petRecord} sizes each object for its fields: adding `status` afterwards would give every
 * such pet a separate property array (a quarter more memory at 1,000,000 pets).
 */
function freeze(id: number, { name, categoryId, status }: NewPet): Pet {
  return Object.freeze(petRecord(id, name, categoryId, status))
}

/**
 * A store in memory. Ids only grow, so every list below is sorted by
 * appending: a page is a binary search plus a slice, O(log n + limit),
 * filtered by status or not, and so is `get` (no Map beside the list: at
 * 1,000,000 pets a Map costs about 40 MB). Ids given by the store are
 * 1, 2, 3…, so `get` usually finds its pet at `id - 1` without searching.
 *
 * @example
 * ```ts
 * const store = memoryStore({ pets: [{ name: 'Rex', categoryId: 1, status: 'available' }] })
 * const handler = createPetstore({ store, keys: ['secret'] })
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): PetStore {
  const all: Pet[] = []
  const byStatus: Record<PetStatus, Pet[]> = { available: [], pending: [], sold: [] }
  let lastId = 0

  const add = (pet: Pet) => {
    all.push(pet)
    if (pet.status !== undefined) byStatus[pet.status].push(pet)
    lastId = pet.id
  }

  const seeded = options.pets ?? []
  const withIds = seeded.filter((pet): pet is Pet => 'id' in pet && pet.id !== undefined)
  for (const pet of [...withIds].sort((a, b) => a.id - b.id)) {
    // Sorted, so a duplicate is the id just added.
    if (!Number.isSafeInteger(pet.id) || pet.id < 1 || pet.id === lastId) {
      throw new TypeError(`memoryStore: seeded pet ids must be unique positive integers, got ${pet.id}`)
    }
    add(freeze(pet.id, pet))
  }
  const given = new Set<NewPet | Pet>(withIds)
  for (const pet of seeded) if (!given.has(pet)) add(freeze(lastId + 1, pet))

  // Every call answers at once: the handler reads through these (see NOW), the async contract wraps them.
  const create = (pet: NewPet): Pet => {
    const stored = freeze(lastId + 1, pet)
    add(stored)
    return stored
  }
  const now: StoreNow = {
    create,
    get(id) {
      const guess = all[id - 1]
      if (guess?.id === id) return guess
      const found = all[firstAfter(all, id - 1)]
      return found?.id === id ? found : undefined
    },
    list({ status, limit, after }: ListQuery) {
      const source = status === undefined ? all : byStatus[status]
      const start = after === undefined ? 0 : firstAfter(source, after)
      return source.slice(start, start + limit)
    },
  }
  const store: BuiltInStore = {
    [NOW]: () => now,
    create: async (pet) => create(pet),
    get: async (id) => now.get(id),
    list: async (query) => now.list(query),
    async ping() {},
    async close() {},
  }
  return builtIn(store)
}
