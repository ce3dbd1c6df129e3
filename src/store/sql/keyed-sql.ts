/**
 * Keyed creates on a SQL store: the key looked up, its pet replayed, or the pet and its key
 * inserted in one transaction. Written once here over each dialect's {@link KeyStatements}.
 *
 * @module
 */
import type { Pet } from '../../api/schemas.js'
import { IN_FLIGHT, type KeyedCreate, type KeyedOutcome, keyOf, PAYLOAD_CONFLICT, settlesWithin } from '../keyed.js'
import type { Answer } from '../store.js'
import { isDuplicateKey } from './database-errors.js'
import { storedPet } from './hot-path.js'

/** A row of the keys table as a lookup reads it. */
export interface KeyRow {
  fingerprint: string
  petId: number
  expiresAt: number
}

/** A keyed create as it is inserted: the pet, and its key beside it. */
export type KeyedRow = Omit<KeyedCreate, 'now' | 'waitMs'>

/** A dialect's statements on the keys table (see `keysTable` in schema-history.ts). */
export interface KeyStatements {
  /** The row of `scope` and `key`, expired or not. */
  find(scope: string, key: string): Answer<KeyRow | undefined>
  /** Deletes the row of `scope` and `key` if it expires at or before `before`. */
  drop(scope: string, key: string, before: number): Answer<void>
  /** Deletes every row that expires at or before `now`, found by the expiry index. */
  sweep(now: number): Answer<void>
  /**
   * Inserts one pet and its key in one transaction, under the commit-order lock: the pet's id. A
   * key already in the table fails it, and nothing is stored.
   */
  insert(row: KeyedRow): Answer<number>
  /** The same for many, all or none, the ids in order: what group commit batches keyed creates with. */
  insertMany(rows: readonly KeyedRow[]): Answer<readonly number[]>
}

/** How often a store deletes its expired keys, at most: on a keyed create, once this long after the last time. */
export const SWEEP_EVERY_MS = 60_000

/** A stored key found again this many times and gone each time (expired, swept) is an error, not a loop. */
const ATTEMPTS = 4

/** The largest expiry: a key whose pet is gone is dropped whatever its expiry. */
const ALWAYS = Number.MAX_SAFE_INTEGER

/**
 * The keyed creates of one store: `createKeyed(keys, get, request)`. A retry while the same key is
 * being created in this process waits for that create (up to `waitMs`, then `in-flight`), then
 * reads what it stored; in another
 * process, the database makes it wait (the key's row is locked until the first commits) and
 * answer a duplicate key, and it reads the key then.
 *
 * @example
 * ```ts
 * const keyed = keyedCreates()
 * await keyed(hot.keys, (id) => hot.get(id), request) // → { pet, replayed: false }
 * ```
 */
export function keyedCreates() {
  const running = new Map<string, Promise<KeyedOutcome>>()
  let nextSweep = 0

  async function attempt(
    keys: KeyStatements,
    get: (id: number) => Answer<Pet | undefined>,
    request: KeyedCreate,
  ): Promise<KeyedOutcome> {
    const { scope, key, now } = request
    if (now >= nextSweep) {
      nextSweep = now + SWEEP_EVERY_MS
      await keys.sweep(now)
    }
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const found = await keys.find(scope, key)
      if (found !== undefined) {
        let before = now
        if (found.expiresAt > now) {
          if (found.fingerprint !== request.fingerprint) return PAYLOAD_CONFLICT
          const pet = await get(found.petId)
          if (pet !== undefined) return { pet, replayed: true }
          // Its pet is gone (test control replaced the pets): the key names nothing any more.
          before = ALWAYS
        }
        await keys.drop(scope, key, before)
      }
      try {
        const { pet, fingerprint, expiresAt } = request
        return { pet: storedPet(await keys.insert({ pet, scope, key, fingerprint, expiresAt }), pet), replayed: false }
      } catch (error) {
        // Another process stored the key meanwhile: what it stored is read on the next turn.
        if (!isDuplicateKey(error)) throw error
      }
    }
    throw new Error(`idempotency key stored and gone again ${ATTEMPTS} times in a row`)
  }

  return async (
    keys: KeyStatements,
    get: (id: number) => Answer<Pet | undefined>,
    request: KeyedCreate,
  ): Promise<KeyedOutcome> => {
    const name = keyOf(request)
    const since = Date.now()
    for (let first = running.get(name); first !== undefined; first = running.get(name)) {
      if (!(await settlesWithin(first, request.waitMs - (Date.now() - since)))) return IN_FLIGHT
    }
    const work = attempt(keys, get, request)
    running.set(name, work)
    try {
      return await work
    } finally {
      if (running.get(name) === work) running.delete(name)
    }
  }
}

/** The size of a keyed row for group commit, roughly: its pet's, its key and the rest. */
export const keyedRowSize = (row: KeyedRow): number => 200 + row.pet.name.length * 3 + row.key.length
