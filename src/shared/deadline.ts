/**
 * Waiting on what the handler does not control (a store, a key function)
 * for no longer than `requestTimeout`, and no longer than the client waits.
 *
 * @module
 */

import { afterTurn } from '../util/after-turn.js'
import { shown } from '../util/option-checks.js'
import { PetstoreError } from './petstore-error.js'

/** The signal of a client going away: an `AbortSignal`, or anything as small that behaves like one. */
export interface AbortLike {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: (event: unknown) => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: (event: unknown) => void): void
}

/** How long one request may wait, and the signal of its client going away. */
export interface Limits {
  /** Milliseconds; `Infinity` waits forever. */
  timeoutMs: number
  signal?: AbortLike | undefined
}

/** The longest delay `setTimeout` takes: beyond it, timers fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * Checks `requestTimeout`: a non-negative number of milliseconds; `0` and
 * `Infinity` wait without limit.
 */
export function timeoutOption(value: number | undefined, fallback: number): number {
  const ms = value ?? fallback
  if (
    typeof ms !== 'number' ||
    Number.isNaN(ms) ||
    ms < 0 ||
    (ms > MAX_TIMEOUT_MS && ms !== Number.POSITIVE_INFINITY)
  ) {
    throw new TypeError(
      `createPetstore: requestTimeout must be 0..${MAX_TIMEOUT_MS} milliseconds or Infinity, got ${shown(value)}`,
    )
  }
  return ms === 0 ? Number.POSITIVE_INFINITY : ms
}

/** The client is gone; nobody reads this answer, which is a 4xx so that it counts as no server failure. */
export const aborted = () => new PetstoreError(400, 'aborted', 'The client aborted the request')

const timedOut = (ms: number) =>
  new PetstoreError(503, 'unavailable', `The pet store timed out after ${ms} ms; try again later`, {
    cause: new Error(`no answer within requestTimeout (${ms} ms)`),
  })

/**
 * Runs `work` and settles with it, unless `limits.timeoutMs` passes first
 * (503 `unavailable`) or the client aborts (400 `aborted`). What `work`
 * settles with afterwards is dropped; a late rejection is handled here, so
 * it never surfaces as an unhandled rejection.
 *
 * @example
 * ```ts
 * const pet = await waitFor(() => store.get(7), { timeoutMs: 30_000, signal: request.signal })
 * ```
 */
export function waitFor<T>(work: () => T | PromiseLike<T>, { timeoutMs, signal }: Limits): Promise<T> {
  // Work not yet begun for a client that has gone is never begun.
  if (signal?.aborted) return Promise.reject(aborted())
  let pending: Promise<T>
  try {
    pending = Promise.resolve(work())
  } catch (error) {
    return Promise.reject(error)
  }
  if (signal === undefined && timeoutMs === Number.POSITIVE_INFINITY) return pending
  return new Promise<T>((resolve, reject) => {
    let done = false
    let armed = false
    let timer: ReturnType<typeof setTimeout> | undefined
    /** Wraps one way of settling so that it also frees the timer and the abort listener. */
    const settle =
      <A>(finish: (value: A) => void) =>
      (value: A) => {
        if (done) return
        done = true
        if (armed) {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
        }
        finish(value)
      }
    const onAbort = settle(() => reject(aborted()))
    pending.then(settle(resolve), settle(reject))
    // Work that answered at once (a synchronous driver, a pet already at hand) has settled before this
    // runs (its reaction was queued first), and gets no timer and no abort listener: a timer armed
    // and cleared, and a listener added and removed, for a query that took microseconds. Nothing can
    // time out or abort in between: no I/O runs before the microtask queue is empty.
    queueMicrotask(() => {
      if (done) return
      armed = true
      if (timeoutMs !== Number.POSITIVE_INFINITY) {
        // After a stall (a long GC pause, a starved CPU) timers run before the replies read meanwhile:
        // one that came in time is let in before the deadline is called.
        const expire = settle<void>(() => reject(timedOut(timeoutMs)))
        timer = setTimeout(() => afterTurn(expire), timeoutMs)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  })
}
