/**
 * Pets as the stores build them: plain objects (their prototype is
 * `Object.prototype`, their own fields are the schema's, in its order), made
 * by two constructors of their own rather than by object literals.
 *
 * Why: the engine gives every plain object built with the same keys in the
 * same order one hidden class, and with it one record of what each field has
 * held. The schemas' own `{ id, name, categoryId, status }` entries hold
 * schema objects, and a request body parsed from JSON holds what the client
 * sent; so a pet made by a literal shared its class with them, its `id` and
 * `categoryId` were marked as holding any value, and the optimized
 * `petJson` turned them into text by the generic conversion (a list of
 * 20 made 75 such calls). A constructor's objects have a class of their own,
 * whose fields stay marked as numbers while they only hold numbers. One
 * constructor per shape sizes each object for exactly its fields.
 *
 * @module
 */
import type { Int64, Pet, PetStatus } from '../api/schemas.js'

interface PetConstructor<Fields extends unknown[]> {
  new (...fields: Fields): Pet
  prototype: object
}

const WithoutStatus = function (this: Pet, id: number, name: string, categoryId: Int64) {
  this.id = id
  this.name = name
  this.categoryId = categoryId
} as unknown as PetConstructor<[id: number, name: string, categoryId: Int64]>
WithoutStatus.prototype = Object.prototype

const WithStatus = function (this: Pet, id: number, name: string, categoryId: Int64, status: PetStatus) {
  this.id = id
  this.name = name
  this.categoryId = categoryId
  this.status = status
} as unknown as PetConstructor<[id: number, name: string, categoryId: Int64, status: PetStatus]>
WithStatus.prototype = Object.prototype

/**
 * A pet, with no `status` key when `status` is undefined. To any reader it
 * is the object literal `{ id, name, categoryId, status }`.
 *
 * @example
 * ```ts
 * petRecord(1, 'Rex', 2) // → { id: 1, name: 'Rex', categoryId: 2 }
 * ```
 */
export function petRecord(id: number, name: string, categoryId: Int64, status?: PetStatus): Pet {
  return status === undefined ? new WithoutStatus(id, name, categoryId) : new WithStatus(id, name, categoryId, status)
}
