/**
 * Creates that carry an `Idempotency-Key`: what a store is given and answers, and the keys of a
 * store in process memory (the memory store's, and a store of your own's, which has none of its own).
 *
 * @module
 */
import type { NewPet, Pet } from '../api/schemas.js'
import type { Answer } from './store.js'

/** A create with a key: the store keeps the key beside the pet, in the same transaction. */
export interface KeyedCreate {
  pet: NewPet
  /** Who sent it: a label of the API key (a prefix of its SHA-256), never the key itself. */
  scope: string
  /** The key, 1 to 255 visible ASCII characters. */
  key: string
  /** The SHA-256 of the payload's canonical JSON, in hex: the same for the same JSON value. */
  fingerprint: string
  /** The request's time, ms since the epoch: a key that expires at or before it is gone. */
  now: number
  /** When the key expires if this create stores it, ms since the epoch. */
  expiresAt: number
  /** How long a retry waits for a create of the same key still running here, in ms; then it is `in-flight`. */
  waitMs: number
}

/**
 * What a keyed create answers: the pet (the first create's, on a replay), a key taken by another
 * payload, or a key whose first create is still running after `waitMs`.
 */
export type KeyedOutcome = { pet: Pet; replayed: boolean } | { conflict: 'payload' | 'in-flight' }

/** The one answer to a key reused with another payload. */
export const PAYLOAD_CONFLICT: KeyedOutcome = Object.freeze({ conflict: 'payload' })
export const IN_FLIGHT: KeyedOutcome = Object.freeze({ conflict: 'in-flight' })

/**
 * Whether `running` settled within `ms`: how a retry waits for the create of its key, bounded.
 *
 * @example
 * ```ts
 * if (!(await settlesWithin(first, 5_000))) return IN_FLIGHT
 * ```
 */
export function settlesWithin(running: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, ms, false)
  })
  const settled = running.then(
    () => true,
    () => true,
  )
  return Promise.race([settled, late]).finally(() => clearTimeout(timer))
}

/** The map's key of a create: scope and key, which holds no newline. */
export const keyOf = ({ scope, key }: KeyedCreate): string => `${scope}\n${key}`

interface Kept {
  fingerprint: string
  expiresAt: number
  /** The pet, or its create still running: a retry meanwhile waits for it. */
  pet: Pet | Promise<Pet>
}

/** The keys of a store in process memory, with its `createKeyed`, and `clear` for a reset. */
export interface KeysInMemory {
  createKeyed(create: KeyedCreate): Answer<KeyedOutcome>
  clear(): void
}

/**
 * Keys in a `Map`, beside a store whose `create` they call: a key and its pet are stored in the
 * same turn when `create` answers at once (the memory store), so nothing can come between them.
 * A retry while the first create runs waits for it (bounded by the request timeout, as every store
 * call is). Expired keys are dropped from the front of the map, oldest first, and only those: the
 * map holds keys in the order they were stored, and one TTL gives them their expiry in that order.
 *
 * @example
 * ```ts
 * const keys = keysInMemory((pet) => store.create(pet))
 * keys.createKeyed({ pet, scope, key: 'abc', fingerprint, now, expiresAt }) // → { pet, replayed: false }
 * ```
 */
export function keysInMemory(create: (pet: NewPet) => Answer<Pet>): KeysInMemory {
  const kept = new Map<string, Kept>()

  function dropExpired(now: number): void {
    for (const [name, entry] of kept) {
      if (entry.expiresAt > now) return
      kept.delete(name)
    }
  }

  const replay = (pet: Pet): KeyedOutcome => ({ pet, replayed: true })

  return {
    createKeyed(request) {
      dropExpired(request.now)
      const name = keyOf(request)
      const found = kept.get(name)
      if (found !== undefined && found.expiresAt > request.now) {
        if (found.fingerprint !== request.fingerprint) return PAYLOAD_CONFLICT
        if (!(found.pet instanceof Promise)) return replay(found.pet)
        const first = found.pet
        return settlesWithin(first, request.waitMs).then((settled) => (settled ? first.then(replay) : IN_FLIGHT))
      }
      kept.delete(name)
      const made = create(request.pet)
      const entry: Kept = { fingerprint: request.fingerprint, expiresAt: request.expiresAt, pet: made }
      kept.set(name, entry)
      if (!(made instanceof Promise)) return { pet: made, replayed: false }
      return made.then(
        (pet) => {
          entry.pet = pet
          return { pet, replayed: false }
        },
        (error: unknown) => {
          // Nothing was stored under the key: a retry creates.
          if (kept.get(name) === entry) kept.delete(name)
          throw error
        },
      )
    },
    clear: () => kept.clear(),
  }
}
