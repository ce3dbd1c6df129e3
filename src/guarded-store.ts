/**
 * The store as one request sees it: every call bounded by the request's
 * limits, and every answer checked against the Pet schema, so that a store
 * with a bug gives a 500 (its cause told to `onError`) rather than a body
 * that breaks the API's contract.
 *
 * @module
 */
import * as v from 'valibot'
import { aborted, type Limits, waitFor } from './deadline.js'
import { type Pet, PetSchema } from './schemas.js'
import { ANSWERS_AT_ONCE, isBuiltIn, type JsonPage, LIST_JSON, type ListQuery, type PetStore } from './store.js'

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
 * A store that answers at once (the memory store): work not yet begun for a
 * client that has gone is never begun; begun, it is done at once. A class:
 * one object per request, where closures were four.
 */
class AtOnce implements GuardedStore {
  constructor(
    private readonly store: PetStore,
    private readonly signal: Limits['signal'],
  ) {}

  create(pet: Parameters<PetStore['create']>[0]) {
    return this.signal?.aborted ? Promise.reject(aborted()) : this.store.create(pet)
  }

  get(id: number) {
    return this.signal?.aborted ? Promise.reject(aborted()) : this.store.get(id)
  }

  list(query: ListQuery) {
    return this.signal?.aborted ? Promise.reject(aborted()) : this.store.list(query)
  }
}

/** The store as the operations use it. */
export interface GuardedStore extends Pick<PetStore, 'create' | 'get' | 'list'> {
  /** A page as JSON text, where the store can write one (see `LIST_JSON`). */
  listJson?: ((query: ListQuery) => Promise<JsonPage>) | undefined
}

/**
 * Wraps `store` for one request: a call still pending after
 * `limits.timeoutMs` is answered 503, a call the client stopped waiting for
 * (`limits.signal`) is answered 400 `aborted`, and malformed rows throw a
 * {@link StoreContractError} (a 500). The stores of this package are proven
 * by the conformance suite, so their answers are not checked again: that
 * check costs more than a page of the memory store takes to read.
 *
 * @example
 * ```ts
 * const store = guardStore(memoryStore(), { timeoutMs: 30_000, signal: request.signal })
 * ```
 */
export function guardStore(store: PetStore, limits: Limits): GuardedStore {
  if (isBuiltIn(store) && store[ANSWERS_AT_ONCE]) return new AtOnce(store, limits.signal)
  if (isBuiltIn(store)) {
    const listJson = store[LIST_JSON]
    return {
      create: (pet) => waitFor(() => store.create(pet), limits),
      get: (id) => waitFor(() => store.get(id), limits),
      list: (query) => waitFor(() => store.list(query), limits),
      listJson: listJson && ((query) => waitFor(() => listJson.call(store, query), limits)),
    }
  }
  return {
    async create(pet) {
      return checkPet(await waitFor(() => store.create(pet), limits), 'store.create')
    },
    async get(id) {
      const pet = await waitFor(() => store.get(id), limits)
      if (pet === undefined) return undefined
      const checked = checkPet(pet, 'store.get')
      if (checked.id !== id) throw new StoreContractError('store.get returned a pet with another id')
      return checked
    },
    async list(query) {
      return checkPage(await waitFor(() => store.list(query), limits), query)
    },
  }
}
