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
 * A copy holding only the Pet fields. {@link petRecord} sizes each object for its fields: adding
 * `status` afterwards would give every such pet a separate property array (a quarter more memory
 * at 1,000,000 pets).
 */
function recordOf(id: number, { name, categoryId, status }: NewPet): Pet {
  return petRecord(id, name, categoryId, status)
}

/**
 * Pets leave the store frozen, so that no caller can add to or change what is stored. They are
 * frozen on the way out, not when stored: the handler reads them only to write their JSON, and
 * `Object.freeze` is a call into the engine's runtime that cost a create 0.5% of its
 * instructions (callgrind). Freezing a pet twice is harmless.
 */
function frozen<T extends Pet | undefined>(pet: T): T {
  return pet === undefined ? pet : Object.freeze(pet)
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
    add(recordOf(pet.id, pet))
  }
  const given = new Set<NewPet | Pet>(withIds)
  for (const pet of seeded) if (!given.has(pet)) add(recordOf(lastId + 1, pet))

  // Every call answers at once: the handler reads through these (see NOW), the async contract wraps them
  // (and freezes what it gives out).
  const create = (pet: NewPet): Pet => {
    const stored = recordOf(lastId + 1, pet)
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
    create: async (pet) => frozen(create(pet)),
    get: async (id) => frozen(now.get(id)),
    list: async (query) => now.list(query).map(frozen),
    async ping() {},
    async close() {},
  }
  return builtIn(store)
}
