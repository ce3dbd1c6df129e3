/**
 * The store as requests see it: every call bounded by its request's
 * limits, and every answer checked against the Pet schema, so that a store
 * with a bug gives a 500 (its cause told to `onError`) rather than a body
 * that breaks the API's contract.
 *
 * @module
 */
import * as v from 'valibot'
import { jsonPageOf, oneMore } from '../api/pet-json.js'
import { type NewPet, type Pet, PetSchema } from '../api/schemas.js'
import { aborted, waitFor } from '../http/deadline.js'
import type { AbortLike } from '../http/exchange.js'
import { isBuiltIn, type JsonPage, LIST_JSON, type ListQuery, NOW, type PetStore, type StoreNow } from './store.js'

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

/** The store as the operations use it: one for the handler, each call bounded by its request's signal. */
export interface GuardedStore {
  /**
   * The page `{ status, limit, after }` as JSON; at once (no promise) from a store that
   * answers synchronously, so that the request is answered in the turn that read it.
   */
  page(query: ListQuery, signal: AbortLike | undefined): JsonPage | Promise<JsonPage>
  /** The pet with `id`, or `undefined`; at once from a store that answers synchronously. */
  get(id: number, signal: AbortLike | undefined): Pet | undefined | Promise<Pet | undefined>
  create(pet: NewPet, signal: AbortLike | undefined): Pet | Promise<Pet>
}

/**
 * Wraps `store` for the handler: a call still pending after `timeoutMs` is
 * answered 503, a call the client stopped waiting for (its `signal`) is
 * answered 400 `aborted`, and malformed rows throw a
 * {@link StoreContractError} (a 500).
 *
 * The stores of this package are proven by the conformance suite, so their
 * answers are not checked again: that check costs more than a page of the
 * memory store takes to read. Where one answers synchronously (see `NOW`),
 * it is called directly: work not yet begun for a client that has gone is
 * never begun, and begun, it is done before any timer or abort could fire.
 *
 * @example
 * ```ts
 * const store = guardStore(memoryStore(), 30_000)
 * const pet = await store.get(7, request.signal)
 * ```
 */
export function guardStore(store: PetStore, timeoutMs: number): GuardedStore {
  const later = <T>(work: () => T | PromiseLike<T>, signal: AbortLike | undefined) =>
    waitFor(work, { timeoutMs, signal })
  if (!isBuiltIn(store)) {
    return {
      async page(query, signal) {
        const asked = oneMore(query)
        return jsonPageOf(checkPage(await later(() => store.list(asked), signal), asked), query.limit)
      },
      async get(id, signal) {
        const pet = await later(() => store.get(id), signal)
        if (pet === undefined) return undefined
        const checked = checkPet(pet, 'store.get')
        if (checked.id !== id) throw new StoreContractError('store.get returned a pet with another id')
        return checked
      },
      async create(pet, signal) {
        return checkPet(await later(() => store.create(pet), signal), 'store.create')
      },
    }
  }
  const listJson = store[LIST_JSON]
  const nowOf = store[NOW]
  /** The store's synchronous calls for a request whose client is still there, if it has them now. */
  const atOnce = (signal: AbortLike | undefined): StoreNow | undefined => {
    const now = nowOf?.call(store)
    if (now !== undefined && signal?.aborted) throw aborted()
    return now
  }
  return {
    page(query, signal) {
      const now = atOnce(signal)
      if (now !== undefined) {
        return now.listJson ? now.listJson(query) : jsonPageOf(now.list(oneMore(query)), query.limit)
      }
      if (listJson) return later(() => listJson.call(store, query), signal)
      const asked = oneMore(query)
      return later(() => store.list(asked), signal).then((pets) => jsonPageOf(pets, query.limit))
    },
    get(id, signal) {
      const now = atOnce(signal)
      return now !== undefined ? now.get(id) : later(() => store.get(id), signal)
    },
    create(pet, signal) {
      const now = atOnce(signal)
      return now?.create !== undefined ? now.create(pet) : later(() => store.create(pet), signal)
    },
  }
}
