/**
 * The store's calls as the conformance tests make them: each answer checked
 * for what holds of any answer, and a rejection named by its call.
 *
 * @module
 */
import { PET_FIELDS } from '../api/pet-fields.js'
import type { NewPet, Pet, PetStatus } from '../api/schemas.js'
import type { PetStore } from '../store/store.js'
import { ConformanceError, deepEqual, equal, ok, show } from './assert.js'

const STATUSES: ReadonlyArray<PetStatus | undefined> = ['available', 'pending', 'sold', undefined]

/** The `i`-th pet of a batch: statuses rotate, absent one time in four, so every filter has something to find. */
export function nthPet(i: number, label = 'pet'): NewPet {
  const pet: NewPet = { name: `${label} ${i}`, categoryId: i }
  const status = STATUSES[i % STATUSES.length]
  if (status !== undefined) pet.status = status
  return pet
}

/** The pet a store must give back for `input` stored under `id`: the Pet fields only, no `status` key when absent. */
export function stored(id: number, input: NewPet): Pet {
  const pet: Record<string, unknown> = { id }
  for (const { key } of PET_FIELDS) if (input[key] !== undefined) pet[key] = input[key]
  return pet as Pet
}

/** Awaits `work`, saying which call of the store rejected: the store's own error alone rarely names it. */
export async function attempt<T>(call: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (cause) {
    const message = cause instanceof Error ? `${cause.name}: ${cause.message}` : show(cause)
    throw new ConformanceError(`${call} rejected: ${message}`, { cause })
  }
}

/** `get(id)`, with the call named if it rejects. */
export const get = (store: PetStore, id: number) => attempt(`get(${id})`, () => store.get(id))

/** Creates `input` and checks the answer: a plain pet with a new positive safe integer id, fields as given. */
export async function create(store: PetStore, input: NewPet): Promise<Pet> {
  const pet = await attempt(`create(${show(input)})`, () => store.create(input))
  ok(pet !== null && typeof pet === 'object', `create(${show(input)}) must return a pet, got ${show(pet)}`)
  ok(
    typeof pet.id === 'number' && Number.isSafeInteger(pet.id) && pet.id >= 1,
    `create(${show(input)}) must return a positive safe integer id as a number, got ${show(pet.id)} (${typeof pet.id})`,
  )
  deepEqual(pet, stored(pet.id, input), `create(${show(input)}) must return the pet as stored`)
  return pet
}

/** Creates the pets one after the other, so their ids are known to ascend in this order. */
export async function createInOrder(store: PetStore, inputs: readonly NewPet[]): Promise<Pet[]> {
  const pets: Pet[] = []
  for (const input of inputs) pets.push(await create(store, input))
  return pets
}

export const batch = (count: number, label?: string) => Array.from({ length: count }, (_, i) => nthPet(i, label))

/** Reads one page and checks what holds for any page: ascending ids after the cursor, at most `limit`, matching the filter. */
export async function page(
  store: PetStore,
  query: { status?: PetStatus; limit: number; after?: number },
): Promise<Pet[]> {
  const call = `list(${show(query)})`
  const pets = await attempt(call, () => store.list(query))
  ok(Array.isArray(pets), `${call} must return an array, got ${show(pets)}`)
  ok(pets.length <= query.limit, `${call} returned ${pets.length} pets, more than the limit`)
  let previous = query.after ?? 0
  for (const pet of pets) {
    ok(
      pet !== null && typeof pet === 'object' && typeof pet.id === 'number',
      `${call} returned ${show(pet)}, not a pet with a numeric id`,
    )
    ok(
      pet.id > previous,
      query.after !== undefined && pet.id <= query.after
        ? `${call} returned id ${pet.id}, which is not after ${query.after}`
        : `${call} returned id ${pet.id} after id ${previous}: ids must ascend`,
    )
    if (query.status !== undefined) {
      equal(pet.status, query.status, `${call} returned pet ${pet.id} whose status does not match the filter`)
    }
    previous = pet.id
  }
  return pets
}

/** Every pet matching `status`, walked page by page with `after`, the way `Link: rel="next"` is followed. */
export async function walk(store: PetStore, limit: number, status?: PetStatus, from?: number): Promise<Pet[]> {
  const pets: Pet[] = []
  let after = from
  for (;;) {
    const query = { limit, ...(status === undefined ? {} : { status }), ...(after === undefined ? {} : { after }) }
    const found = await page(store, query)
    pets.push(...found)
    if (found.length < limit) return pets
    after = found[found.length - 1]!.id
  }
}

/** Creates `input`, then checks that create, get and list all give it back exactly. */
export async function roundTrip(store: PetStore, input: NewPet): Promise<void> {
  const pet = await create(store, input)
  const expected = stored(pet.id, input)
  deepEqual(await get(store, pet.id), expected, `get(${pet.id}) after create(${show(input)})`)
  deepEqual(
    await page(store, { limit: 1, after: pet.id - 1 }),
    [expected],
    `list({ limit: 1, after: ${pet.id - 1} }) after create(${show(input)})`,
  )
}
