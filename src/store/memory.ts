/**
 * `memoryStore`: pets in process memory. For tests, demos and one-process
 * servers; nothing survives a restart.
 *
 * @module
 */

import * as v from 'valibot'
import { PET_SHAPE } from '../api/pet-fields.js'
import { jsonPageOf, oneMore } from '../api/pet-json.js'
import { type NewPet, NewPetSchema, type Pet, type PetStatus } from '../api/schemas.js'
import { knownOptions, optionsObject, shown } from '../util/option-checks.js'
import { keysInMemory } from './keyed.js'
import { petRecord } from './pet-record.js'
import { MAX_SEEDED_ID, noRoom } from './seed-pets.js'
import {
  builtInStore,
  type ListQuery,
  type NamespaceMaker,
  type ResettablePetStore,
  type Store,
  testControlOf,
} from './store.js'

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Pets to start with. Those with an `id` keep it; the others get the next
   * ids in order. Each must be a pet the API would take (`POST /pets`): a name
   * of 1 to 255 characters, an integer `categoryId` (a `number` within
   * ±(2^53−1), a `bigint` beyond), a known `status` or none; else `memoryStore`
   * throws, naming the pet and the field. @default []
   */
  pets?: ReadonlyArray<NewPet | Pet> | undefined
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

/** A copy holding only the Pet fields, sized for them (see pet-record.ts). */
const recordOf = (id: number, pet: NewPet): Pet => petRecord(id, pet)

/**
 * Pets leave the store frozen, so that no caller can add to or change what is stored. They are
 * frozen on the way out, not when stored: the handler reads them only to write their JSON, and
 * a freeze is a call into the engine's runtime. Freezing a pet twice is harmless.
 */
function frozen<T extends Pet | undefined>(pet: T): T {
  return pet === undefined ? pet : Object.freeze(pet)
}

/** A seeded pet as the API would take it, and the id it was given with, if any. */
interface Seed {
  id: unknown
  pet: NewPet
}

/**
 * `pets` checked as the API checks a new pet: a seeded pet is served as it is, never checked
 * again, so a pet without a name would be served as `"name":"undefined"` and a `categoryId` of
 * `NaN` as invalid JSON. Each pet comes out as the schema gives it (a `bigint` within the safe
 * range as a `number`, as the other stores give it back).
 */
function seeds(pets: unknown): Seed[] {
  if (pets === undefined) return []
  if (!Array.isArray(pets)) {
    const got = typeof pets === 'object' && pets !== null ? 'an object' : shown(pets)
    throw new TypeError(`memoryStore: pets must be an array of pets, got ${got}`)
  }
  return pets.map((given: unknown, index) => {
    const where = `memoryStore: pets[${index}]`
    if (typeof given !== 'object' || given === null) {
      throw new TypeError(`${where} must be a pet, ${PET_SHAPE}, got ${shown(given)}`)
    }
    const result = v.safeParse(NewPetSchema, given, { abortPipeEarly: true })
    if (!result.success) {
      const issue = result.issues[0]
      // A missing key is reported by its object (see validate.ts): say what is wrong with the key.
      const message = issue.kind === 'schema' && issue.received === 'undefined' ? 'is required' : issue.message
      const path = v.getDotPath(issue)
      throw new TypeError(`${where}${path === null ? '' : `.${path}`}: ${message}`)
    }
    return { id: (given as { id?: unknown }).id, pet: result.output }
  })
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
export function memoryStore(options: MemoryStoreOptions = {}): ResettablePetStore {
  optionsObject('memoryStore', 'options', options, "{ pets: [{ name: 'Rex', categoryId: 1 }] }")
  knownOptions('memoryStore', options, ['pets'])
  const seeded = seeds(options.pets)
  const all: Pet[] = []
  const byStatus: Record<PetStatus, Pet[]> = { available: [], pending: [], sold: [] }
  let lastId = 0
  /** Changes on every reset or seed, so that a cursor from before is refused (see cursor.ts). */
  let generation = 0

  const add = (pet: Pet) => {
    all.push(pet)
    if (pet.status !== undefined) byStatus[pet.status].push(pet)
    lastId = pet.id
  }

  const withIds = seeded.filter((seed): seed is Seed & { id: number } => seed.id !== undefined)
  for (const { id, pet } of [...withIds].sort((a, b) => a.id - b.id)) {
    // Sorted, so a duplicate is the id just added.
    if (!Number.isSafeInteger(id) || id < 1 || id === lastId) {
      throw new TypeError(`memoryStore: seeded pet ids must be unique positive integers, got ${shown(id)}`)
    }
    add(recordOf(id, pet))
  }
  for (const { id, pet } of seeded) if (id === undefined) add(recordOf(lastId + 1, pet))
  if (lastId > MAX_SEEDED_ID)
    throw new TypeError(`memoryStore: ${noRoom(seeded.map(({ id }) => id as number | undefined))}`)
  // What reset() puts back: copies, since the records themselves leave the store (and get frozen).
  const initial = all.map((pet) => recordOf(pet.id, pet))

  const create = (pet: NewPet): Pet => {
    const stored = recordOf(lastId + 1, pet)
    add(stored)
    return stored
  }
  // Idempotency keys of this store alone: a namespace's store keeps its own.
  const keys = keysInMemory(create)

  /** Every pet replaced by `pets` (ascending ids): a reset, or a seed. Keys naming the pets gone go too. */
  const replace = (pets: readonly Pet[]) => {
    keys.clear()
    all.length = 0
    for (const list of Object.values(byStatus)) list.length = 0
    lastId = 0
    generation++
    for (const pet of pets) add(recordOf(pet.id, pet))
  }

  // Every call answers at once; the public async calls freeze what they give out.
  const list = ({ status, limit, after }: ListQuery): Pet[] => {
    const source = status === undefined ? all : byStatus[status]
    const start = after === undefined ? 0 : firstAfter(source, after)
    return source.slice(start, start + limit)
  }
  const store: Store = {
    create,
    createKeyed: keys.createKeyed,
    get(id) {
      const guess = all[id - 1]
      if (guess?.id === id) return guess
      const found = all[firstAfter(all, id - 1)]
      return found?.id === id ? found : undefined
    },
    list,
    // JSON.stringify of the slice, written field by field: no faster way to hold a page as text.
    page: (query) => jsonPageOf(list(oneMore(query)), query.limit, generation),
    ping() {},
    close() {},
  }
  const made = builtInStore(store, frozen, replace, memoryNamespaces())
  testControlOf(made)?.remember(initial)
  return made
}

/** Namespaces in memory: a store of their own each, kept in a map. */
function memoryNamespaces(): NamespaceMaker {
  const stores = new Map<string, ResettablePetStore>()
  return {
    open(name, seed, max) {
      let store = stores.get(name)
      if (store === undefined && stores.size < max) {
        store = memoryStore({ pets: seed })
        stores.set(name, store)
      }
      return store
    },
    async drop(name) {
      stores.delete(name)
    },
  }
}
