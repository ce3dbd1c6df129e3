/**
 * The storage contract every store implements: memory, SQL, or your own.
 *
 * @module
 */
import type { NewPet, Pet, PetStatus } from './schemas.js'

/** One page of `list`: pets with `id > after`, ascending by id, at most `limit`. */
export interface ListQuery {
  status?: PetStatus | undefined
  limit: number
  after?: number | undefined
}

/**
 * Where pets live. Ids are positive safe integers assigned by the store,
 * unique and increasing; a pet created without `status` has no `status` key.
 * A store signals that its database cannot be reached by throwing
 * `PetstoreError.unavailable()`; anything else it throws is a 500.
 *
 * @example
 * ```ts
 * const store: PetStore = memoryStore()
 * const pet = await store.create({ name: 'Rex', categoryId: 1 })
 * await store.get(pet.id) // → the same pet
 * ```
 */
export interface PetStore {
  create(pet: NewPet): Promise<Pet>
  get(id: number): Promise<Pet | undefined>
  list(query: ListQuery): Promise<Pet[]>
  /** Resolves when the store can serve (schema ready, database reachable). */
  ping?(): Promise<void>
  /** Releases what the store opened. Idempotent. */
  close?(): Promise<void>
}
