/**
 * The store as requests see it: every call bounded by its request's limits.
 *
 * @module
 */
import type { NewPet, Pet } from '../api/schemas.js'
import { type AbortLike, aborted, waitFor } from '../shared/deadline.js'
import type { Answer, JsonPage, ListQuery, Store } from './store.js'

/** The store as the operations use it: one for the handler, each call bounded by its request's signal. */
export interface GuardedStore {
  page(query: ListQuery, signal: AbortLike | undefined): Answer<JsonPage>
  get(id: number, signal: AbortLike | undefined): Answer<Pet | undefined>
  create(pet: NewPet, signal: AbortLike | undefined): Answer<Pet>
}

/**
 * Wraps `store` for the handler: a call still pending after `timeoutMs` is
 * answered 503, and a read the client stopped waiting for (its `signal`) 400
 * `aborted`. Work not yet begun for a client that has gone is never begun;
 * an answer given at once is passed on as it is, with no timer or listener:
 * nothing can time out or abort while a synchronous call runs.
 *
 * @example
 * ```ts
 * const store = guardStore(storeOf(memoryStore()), 30_000)
 * const pet = await store.get(7, request.signal)
 * ```
 */
export function guardStore(store: Store, timeoutMs: number): GuardedStore {
  const bounded = <T>(answer: Answer<T>, signal: AbortLike | undefined): Answer<T> =>
    answer instanceof Promise ? waitFor(() => answer, { timeoutMs, signal }) : answer
  return {
    page(query, signal) {
      if (signal?.aborted) throw aborted()
      return bounded(store.page(query), signal)
    },
    get(id, signal) {
      if (signal?.aborted) throw aborted()
      return bounded(store.get(id), signal)
    },
    create(pet, signal) {
      if (signal?.aborted) throw aborted()
      // Begun, a create is waited for even if the client goes: it may commit, and its answer
      // (a 201) is what the log and the metrics must count.
      return bounded(store.create(pet), undefined)
    },
  }
}
