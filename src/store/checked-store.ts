/**
 * A user's {@link PetStore} as the handler's {@link Store}: every answer
 * checked against the Pet schema, so that a store with a bug gives a 500
 * (its cause told to `onError`) rather than a body that breaks the API's
 * contract. The stores of this package are proven by the conformance suite
 * and used as they are.
 *
 * @module
 */
import * as v from 'valibot'
import { jsonPageOf, oneMore } from '../api/pet-json.js'
import { type Pet, PetSchema } from '../api/schemas.js'
import { builtInOf, type ListQuery, type PetStore, type Store } from './store.js'

/** A Pet and nothing else: what a store may return. Built from PetSchema, the one source of truth. */
const StoredPetSchema = v.strictObject(PetSchema.entries)

/** A store broke its contract. The message says how, never with the data. */
export class StoreContractError extends Error {
  override name = 'StoreContractError'
}

function checkPet(value: unknown, where: string): Pet {
  const result = v.safeParse(StoredPetSchema, value, { abortEarly: true })
  if (result.success) return result.output
  const issue = result.issues[0]
  const path = v.getDotPath(issue) ?? 'the pet'
  throw new StoreContractError(`${where} returned a malformed pet: ${path}: expected ${issue.expected ?? 'a Pet'}`)
}

/** A page must be what `list` promises: pets after the cursor, ascending, of the status asked, no more than asked. */
function checkPage(rows: unknown, { status, limit, after }: ListQuery): Pet[] {
  if (!Array.isArray(rows)) throw new StoreContractError('store.list returned no array')
  if (rows.length > limit) throw new StoreContractError(`store.list returned ${rows.length} pets for limit ${limit}`)
  let previous = after ?? 0
  return rows.map((row, index) => {
    const pet = checkPet(row, `store.list, at [${index}],`)
    if (pet.id <= previous) throw new StoreContractError('store.list returned pets out of order or before the cursor')
    if (status !== undefined && pet.status !== status) {
      throw new StoreContractError('store.list returned a pet of another status')
    }
    previous = pet.id
    return pet
  })
}

/**
 * The handler's {@link Store} for `store`: the one a store of this package
 * carries, or `store`'s calls with their answers checked.
 *
 * @example
 * ```ts
 * const page = await storeOf(myStore).page({ limit: 20 }) // → { json: '[…]', lastId, more }
 * ```
 */
export function storeOf(store: PetStore): Store {
  const own = builtInOf(store)
  if (own !== undefined) return own
  const list = async (query: ListQuery) => checkPage(await store.list(query), query)
  return {
    list,
    async page(query) {
      return jsonPageOf(await list(oneMore(query)), query.limit)
    },
    async get(id) {
      const pet = await store.get(id)
      if (pet === undefined) return undefined
      const checked = checkPet(pet, 'store.get')
      if (checked.id !== id) throw new StoreContractError('store.get returned a pet with another id')
      return checked
    },
    async create(pet) {
      return checkPet(await store.create(pet), 'store.create')
    },
    ping: () => store.ping?.(),
    close: () => store.close?.(),
  }
}
