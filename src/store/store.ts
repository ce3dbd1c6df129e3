/**
 * The storage contract every store implements (memory, SQL, or your own),
 * and the one interface the handler calls a store through.
 *
 * @module
 */
import type { NewPet, Pet, PetStatus } from '../api/schemas.js'
import type { AbortLike } from '../shared/deadline.js'
import type { KeyedCreate, KeyedOutcome } from './keyed.js'

/** One page of `list`: pets with `id > after`, ascending by id, at most `limit`. */
export interface ListQuery {
  status?: PetStatus | undefined
  limit: number
  after?: number | undefined
}

/**
 * Where pets live. Ids are positive safe integers assigned by the store,
 * unique and increasing; a pet created without `status` has no `status` key.
 * A store signals that its database cannot be reached by throwing
 * `PetstoreError.unavailable()`; anything else it throws is a 500.
 *
 * @example
 * ```ts
 * const store: PetStore = memoryStore()
 * const pet = await store.create({ name: 'Rex', categoryId: 1 })
 * await store.get(pet.id) // → the same pet
 * ```
 */
export interface PetStore {
  create(pet: NewPet): Promise<Pet>
  get(id: number): Promise<Pet | undefined>
  list(query: ListQuery): Promise<Pet[]>
  /** Resolves when the store can serve (schema ready, database reachable). */
  ping?(): Promise<void>
  /** Releases what the store opened. Idempotent. */
  close?(): Promise<void>
}

/**
 * A store of this package that tests can put back as it started: what
 * `memoryStore()`, `sqliteStore()`, `postgresStore()`, `mysqlStore()` and
 * `kyselyStore()` return. The `PetStore` interface itself has no `reset`.
 *
 * @example
 * ```ts
 * const store = memoryStore({ pets: [{ name: 'Rex', categoryId: 1 }] })
 * await store.create({ name: 'Tom', categoryId: 2 }) // id 2
 * await store.reset() // Rex alone again, and the next create gets id 2
 * ```
 */
export interface ResettablePetStore extends PetStore {
  /**
   * Puts back the seeded pets (the `pets` option of `memoryStore`, or what
   * `seed()` of `petstore-server/testing` was given; none otherwise), every
   * other pet removed, and ids restarting after the highest seeded one. For
   * tests: pets created meanwhile are gone.
   */
  reset(): Promise<void>
}

/** What a built-in store can do for test control: replace every pet by these, ids as given. */
export type Replace = (pets: readonly Pet[]) => Promise<void> | void

/** A page of pets as JSON text, ready to send. */
export interface JsonPage {
  /** The JSON array of at most `limit` pets, in the API's form: no `status` key when it is absent. */
  json: string
  /** Id of the last pet in `json`; `undefined` for an empty page. */
  lastId: number | undefined
  /** Whether more pets match after `lastId`. */
  more: boolean
  /**
   * The store's generation as the page was read, a number that changes on every reset or seed
   * (a cursor issued under one is refused under another); `undefined` where the store has none.
   */
  generation?: number | undefined
}

/** What a call gives: at once where the store can (memory, a SQLite read), else a promise. */
export type Answer<T> = T | Promise<T>

/**
 * The calls of {@link PetStore} that take one argument and that the handler makes, by name: the
 * one list the wrappers of a store (its public form, its checks, its bounds) go through. A new
 * call of the API is added to `PetStore` and here, then written by each store.
 */
export const PET_CALLS = ['get', 'list', 'create'] as const satisfies ReadonlyArray<keyof PetStore>

/** The calls that only read: abandoned when the client goes. Any other is waited for: it may commit. */
export const READ_CALLS: ReadonlySet<string> = new Set(['get', 'list', 'page'])

type PetCall = (typeof PET_CALLS)[number]
type StoreCall<F> = F extends (arg: infer A) => Promise<infer R> ? (arg: A, signal?: AbortLike) => Answer<R> : never

/**
 * The store as the handler calls it: each call of {@link PetStore} answering at once where it
 * can, so that a request is answered in the turn that read it, and `page`, a page as JSON text,
 * which a SQL database writes faster than rows become objects. `signal` is the request's, for
 * `guardStore`; a store itself may leave it. The built-in stores implement it; a user's
 * {@link PetStore} is wrapped into it by `storeOf`.
 */
export type Store = { [K in PetCall]: StoreCall<PetStore[K]> } & {
  /** The page `{ status, limit, after }` as JSON, `limit` the page size. */
  page(query: ListQuery, signal?: AbortLike): Answer<JsonPage>
  /**
   * A create with an `Idempotency-Key`: the pet and its key stored together, or the pet the key
   * already names replayed, or a conflict when the key came with another payload. Not a call of
   * {@link PetStore}: a store of your own gets keys in process memory (see checked-store.ts).
   */
  createKeyed(create: KeyedCreate, signal?: AbortLike): Answer<KeyedOutcome>
  ping(): Answer<void>
  close(): Answer<void>
}

/** The calls of {@link Store} that take an argument: the {@link PET_CALLS}, `page` and `createKeyed`. */
export const STORE_CALLS = [...PET_CALLS, 'page', 'createKeyed'] as const

/** A name of {@link STORE_CALLS}. */
export type StoreCallName = (typeof STORE_CALLS)[number]

/**
 * The {@link STORE_CALLS} of a store, each made by `make` from its name: how a wrapper or a
 * store that forwards its calls (to a dialect, say) writes them once for all.
 *
 * @example
 * ```ts
 * const calls = storeCalls((name) => (arg) => inner[name](arg as never))
 * ```
 */
export function storeCalls(
  make: (name: StoreCallName) => (arg: any, signal?: AbortLike) => Answer<unknown>,
): Pick<Store, StoreCallName> {
  const calls: Record<string, unknown> = {}
  for (const name of STORE_CALLS) calls[name] = make(name)
  return calls as Pick<Store, StoreCallName>
}

type Out = <T extends Pet | undefined>(pet: T) => T

/** `out` applied to every pet of an answer: one, or each of a list. */
const outOf = (out: Out, answer: unknown): unknown =>
  Array.isArray(answer) ? answer.map(out) : typeof answer === 'object' && answer !== null ? out(answer as Pet) : answer

/**
 * A store made by this package: the public async {@link PetStore} over a
 * {@link Store}. The calls are own properties, so that a spread copy
 * (`{ ...memoryStore(), list }`) is a plain `PetStore` of its own, whose
 * overrides the handler calls; only the original carries the `Store`.
 */
class BuiltInStore implements ResettablePetStore {
  readonly #store: Store
  readonly #replace: Replace | undefined
  readonly #namespaces: NamespaceMaker | undefined
  /** What `reset` puts back. */
  #seeded: readonly Pet[] = []
  declare readonly create: PetStore['create']
  declare readonly get: PetStore['get']
  declare readonly list: PetStore['list']
  readonly ping: () => Promise<void>
  readonly close: () => Promise<void>
  readonly reset: () => Promise<void>

  constructor(store: Store, out: Out, replace: Replace | undefined, namespaces: NamespaceMaker | undefined) {
    this.#store = store
    this.#replace = replace
    this.#namespaces = namespaces
    for (const name of PET_CALLS) {
      const call = store[name] as (arg: unknown) => Answer<unknown>
      Object.defineProperty(this, name, {
        value: async (arg: unknown) => outOf(out, await call(arg)),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    this.ping = async () => store.ping()
    this.close = async () => store.close()
    this.reset = async () => {
      if (replace === undefined) throw new TypeError('this store cannot be reset')
      await replace(this.#seeded)
    }
  }

  /** The test control of `store`, when this package made it with one. */
  static controlOf(store: PetStore): TestControl | undefined {
    if (!(#store in store)) return undefined
    const own = store as BuiltInStore
    const replace = own.#replace
    if (replace === undefined) return undefined
    return {
      replace: async (pets) => replace(pets),
      remember: (pets) => {
        own.#seeded = pets
      },
    }
  }

  /** The namespaces beside `store`, each starting from what its `reset()` puts back. */
  static namespacesOf(store: PetStore): Namespaces | undefined {
    if (!(#store in store)) return undefined
    const own = store as BuiltInStore
    const maker = own.#namespaces
    if (maker === undefined) return undefined
    return { open: (name, max) => maker.open(name, own.#seeded, max), drop: (name) => maker.drop(name) }
  }

  /** The `Store` behind `store`, when this package made it (not a copy of one). */
  static of(store: PetStore): Store | undefined {
    return #store in store ? (store as BuiltInStore).#store : undefined
  }
}

const asIs = <T>(pet: T): T => pet

/**
 * The public store over `store`. `out` is applied to every pet the public
 * calls give (the memory store freezes its records there).
 */
export function builtInStore(store: Store, out?: Out): PetStore
export function builtInStore(
  store: Store,
  out: Out | undefined,
  replace: Replace,
  namespaces?: NamespaceMaker,
): ResettablePetStore
export function builtInStore(store: Store, out: Out = asIs, replace?: Replace, namespaces?: NamespaceMaker): PetStore {
  return new BuiltInStore(store, out, replace, namespaces)
}

/**
 * How a built-in store makes the stores of its namespaces: each a store of its own, with pets and
 * ids of its own, on the same database (a table of its own) or in the same process (memory).
 */
export interface NamespaceMaker {
  /**
   * The store of namespace `name`, made on first use, with `seed` in it and remembered for its
   * `reset()`; `undefined` when it does not exist and `max` namespaces do.
   */
  open(name: string, seed: readonly Pet[], max: number): Answer<ResettablePetStore | undefined>
  /** Removes namespace `name` and its pets (its tables); nothing when it does not exist. */
  drop(name: string): Promise<void>
}

/** The namespaces of a store: {@link NamespaceMaker}, each starting from the store's seed. */
export interface Namespaces {
  open(name: string, max: number): Answer<ResettablePetStore | undefined>
  drop(name: string): Promise<void>
}

/** The namespaces beside a store this package made; `undefined` for any other (a copy, your own). */
export const namespacesOf = (store: PetStore): Namespaces | undefined => BuiltInStore.namespacesOf(store)

/** Test control of a built-in store: `seed()` and the reset route use it. */
export interface TestControl {
  /** Replaces every pet by `pets` (ascending ids, kept), the next id after the highest. */
  replace(pets: readonly Pet[]): Promise<void>
  /** Makes `pets` what `reset()` puts back. */
  remember(pets: readonly Pet[]): void
}

/** The test control of a store this package made; `undefined` for any other (a copy, your own). */
export const testControlOf = (store: PetStore): TestControl | undefined => BuiltInStore.controlOf(store)

/** The `Store` behind a store this package made; `undefined` for any other. */
export const builtInOf = (store: PetStore): Store | undefined => BuiltInStore.of(store)
