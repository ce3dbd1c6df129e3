/**
 * `seed(store, pets)`: pets loaded into an empty store, the same way on
 * every store, and remembered as what its `reset()` puts back.
 *
 * @module
 */
import type { NewPet } from '../api/schemas.js'
import { type SeedRecords, seedRecords } from '../store/seed-pets.js'
import { type PetStore, testControlOf } from '../store/store.js'

/** A pet of a seed: a new pet, and the id it keeps when one is given. */
export type SeedPet = NewPet & { id?: number }

/**
 * Loads `pets` into `store` if it holds no pet, and makes them what the
 * store's `reset()` puts back either way. A pet with an `id` keeps it; the
 * others get the next ids in order, and the next create the id after the
 * highest. Resolves with whether the pets were loaded: `false` for a store
 * that already held pets, which is left as it is.
 *
 * A store of this package is loaded in one transaction, ids as given. Any
 * other `PetStore` gets `create` calls in order, so it takes no `id`.
 * Throws a `TypeError` naming the entry and the field of a pet the API
 * would refuse (`pets[2].categoryId: must be an integer`).
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'petstore-server/sqlite'
 * import { seed } from 'petstore-server/testing'
 *
 * const store = sqliteStore({ path: ':memory:' })
 * await seed(store, [{ id: 7, name: 'Rex', categoryId: 1 }, { name: 'Tom', categoryId: 2 }]) // → true
 * await store.reset() // Rex (7) and Tom (8) again, whatever was created since
 * ```
 */
export async function seed(store: PetStore, pets: readonly SeedPet[]): Promise<boolean> {
  let records: SeedRecords
  try {
    records = seedRecords(pets)
  } catch (error) {
    throw new TypeError(`seed: ${(error as Error).message}`)
  }
  const control = testControlOf(store)
  const empty = (await store.list({ limit: 1 })).length === 0
  if (control === undefined) {
    if (pets.some((pet) => pet.id !== undefined)) {
      throw new TypeError('seed: ids can be kept only in a store of this package; leave id out for your own')
    }
    if (empty) {
      for (const { id: _, ...pet } of records) await store.create(pet)
    }
    return empty
  }
  control.remember(records)
  if (empty) await control.replace(records)
  return empty
}
