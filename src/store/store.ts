/**
 * The storage contract every store implements: memory, SQL, or your own.
 *
 * @module
 */
import type { NewPet, Pet, PetStatus } from '../api/schemas.js'

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
 * A page written as JSON text by the store itself: a SQL database can build
 * the array (`json_group_array`) faster than rows can become objects and
 * objects become text again.
 */
export interface JsonPage {
  /** The JSON array of at most `limit` pets, in the API's form: no `status` key when it is absent. */
  json: string
  /** Id of the last pet in `json`; `undefined` for an empty page. */
  lastId: number | undefined
  /** Whether more pets match after `lastId`. */
  more: boolean
}

/**
 * Internal to this package: what its own stores offer beyond {@link PetStore}.
 * They are proven by the conformance suite, so the handler neither re-checks
 * their answers (it does check a user's store) and, where they have it, asks
 * them for a page as JSON text. Symbols keep this off the public contract;
 * which stores are this package's own is kept by identity (see {@link builtIn}).
 */
export const LIST_JSON = Symbol.for('petstore-server.listJson')
/**
 * Where a store of this package offers its calls answered synchronously, when
 * it can at that moment: the memory store always, a SQLite store once its
 * schema is ready. A read is then answered in the turn that asked for it, with
 * no promise between the request and its answer; no timeout can fire and no
 * client can go away while it works, so the handler arms neither.
 */
export const NOW = Symbol.for('petstore-server.now')

/** A store's calls answered before they return; see {@link NOW}. Errors are thrown as the async calls reject. */
export interface StoreNow {
  get(id: number): Pet | undefined
  list(query: ListQuery): Pet[]
  /** As {@link BuiltInStore}'s `LIST_JSON`, where the store writes pages as JSON. */
  listJson?(query: ListQuery): JsonPage
  /** Where a create is synchronous too (memory; a SQL store's creates go through group commit). */
  create?(pet: NewPet): Pet
}

/** A store of this package, registered by {@link builtIn}: {@link LIST_JSON} where the store can. */
export interface BuiltInStore extends PetStore {
  /** The synchronous calls, or `undefined` while the store cannot answer synchronously (not migrated yet, closed). */
  [NOW]?(): StoreNow | undefined
  /** The page `{ status, limit, after }` as JSON text, with `limit` the page size itself (not one more). */
  [LIST_JSON]?(query: ListQuery): Promise<JsonPage>
}

/**
 * The stores this package made, by identity. A property would not do: `{ ...memoryStore(), list }`
 * copies every own property, symbols included, and the copy's `list` must then be the one called.
 * Kept on `globalThis`, so that two copies of the package (its ESM and CommonJS builds) know each
 * other's stores.
 */
const REGISTRY = Symbol.for('petstore-server.builtInStores')
const shared = globalThis as { [REGISTRY]?: WeakSet<object> }
shared[REGISTRY] ??= new WeakSet()
const made: WeakSet<object> = shared[REGISTRY]

/** Registers `store` as one of this package's own; returns it. */
export function builtIn<S extends BuiltInStore>(store: S): S {
  made.add(store)
  return store
}

/** Whether `store` is one of this package's own, as made (not a copy of one). */
export function isBuiltIn(store: PetStore): store is BuiltInStore {
  return made.has(store)
}
