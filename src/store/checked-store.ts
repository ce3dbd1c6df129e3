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
import { keysInMemory } from './keyed.js'
import { builtInOf, type ListQuery, PET_CALLS, type PetStore, type Store } from './store.js'

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
 * What a call answered, checked: no answer, a pet, or a list of pets, as the
 * call's name and argument say. A call given an id answers that pet; a page
 * (`list`) answers what {@link checkPage} holds it to.
 */
function checkAnswer(name: string, arg: unknown, answer: unknown): unknown {
  if (answer === undefined && name !== 'create' && name !== 'list') return undefined
  if (name === 'list') return checkPage(answer, arg as ListQuery)
  const pet = checkPet(answer, `store.${name}`)
  if (typeof arg === 'number' && pet.id !== arg) {
    throw new StoreContractError(`store.${name} returned a pet with another id`)
  }
  return pet
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
  const checked = {
    ping: () => store.ping?.(),
    close: () => store.close?.(),
  } as Store
  for (const name of PET_CALLS) {
    ;(checked as Record<string, unknown>)[name] = async (arg: unknown) =>
      checkAnswer(name, arg, await (store[name] as (arg: unknown) => Promise<unknown>).call(store, arg))
  }
  checked.page = async (query) => jsonPageOf((await checked.list(oneMore(query))) as Pet[], query.limit)
  // `PetStore` has no keys: they live in this process, lost on a restart and not shared (docs/testing-clients.md).
  checked.createKeyed = keysInMemory((pet) => checked.create(pet) as Promise<Pet>).createKeyed
  return checked
}
