/**
 * The store as requests see it: every call bounded by its request's limits.
 *
 * @module
 */
import { aborted, waitFor } from '../shared/deadline.js'
import { type Answer, READ_CALLS, type Store, storeCalls } from './store.js'

/**
 * Wraps `store` for the handler: a call still pending after `timeoutMs` is
 * answered 503, and a read the client stopped waiting for (its `signal`) 400
 * `aborted`. Work not yet begun for a client that has gone is never begun.
 * A call that may write is waited for once begun, even if the client goes:
 * it may commit, and its answer is what the log and the metrics must count.
 * An answer given at once is passed on as it is, with no timer or listener:
 * nothing can time out or abort while a synchronous call runs.
 *
 * @example
 * ```ts
 * const store = guardStore(storeOf(memoryStore()), 30_000)
 * const pet = await store.get(7, request.signal)
 * ```
 */
export function guardStore(store: Store, timeoutMs: number): Store {
  const calls = storeCalls((name) => {
    const call = store[name] as (arg: unknown) => Answer<unknown>
    const reads = READ_CALLS.has(name)
    return (arg, signal) => {
      if (signal?.aborted) throw aborted()
      const answer = call(arg)
      if (!(answer instanceof Promise)) return answer
      return waitFor(() => answer, { timeoutMs, signal: reads ? signal : undefined })
    }
  })
  return { ...store, ...calls }
}
