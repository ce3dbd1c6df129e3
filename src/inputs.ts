/**
 * The inputs of `GET /pets` and `POST /pets`, checked field by field by the
 * entries of their object schemas: the same checks, output and errors as
 * `validate(ListQuerySchema, …)` and `validate(NewPetSchema, …)` (a property
 * test holds them to it), without valibot's generic walk over an object.
 * That walk reads and writes every key through megamorphic keyed accesses;
 * naming the fields here halves the cost of checking a query (measured
 * alone: 0.34 µs against 0.17 µs, where a page costs ours ~30 µs of CPU). The schemas
 * stay the one source of the checks, the types and the OpenAPI document.
 *
 * @module
 */
import { ListQuerySchema, type NewPet, NewPetSchema, type PetStatus } from './schemas.js'
import { FieldChecks, validate } from './validate.js'

const QUERY = ListQuerySchema.entries
const NEW_PET = NewPetSchema.entries

/** The query parameters of `GET /pets` as given, each `undefined` when absent. */
export interface RawListQuery {
  limit: string | undefined
  status: string | undefined
  cursor: string | undefined
}

/** What `GET /pets` asks for. */
export interface ListQueryInput {
  limit: number
  status: PetStatus | undefined
  cursor: string | undefined
}

/**
 * The checked query of `GET /pets`, or a 400 `validation_error` naming every bad parameter.
 *
 * @example
 * ```ts
 * listQueryOf({ limit: undefined, status: 'sold', cursor: undefined }) // → { limit: 20, status: 'sold', cursor: undefined }
 * ```
 */
export function listQueryOf(raw: RawListQuery): ListQueryInput {
  const fields = new FieldChecks()
  const limit = fields.check(QUERY.limit, raw.limit, 'limit')
  const status = fields.check(QUERY.status, raw.status, 'status')
  const cursor = fields.check(QUERY.cursor, raw.cursor, 'cursor')
  fields.done()
  return { limit, status, cursor }
}

/**
 * The checked body of `POST /pets` (unknown keys dropped, no `status` key
 * when none was given), or a 400 `validation_error` naming every bad field.
 *
 * @example
 * ```ts
 * newPetOf({ name: 'Rex', categoryId: 1, id: 7 }) // → { name: 'Rex', categoryId: 1 }
 * ```
 */
export function newPetOf(body: unknown): NewPet {
  // No object: the schema says what is wrong (an array as `null`: valibot's object schema takes arrays; the API not).
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return validate(NewPetSchema, Array.isArray(body) ? null : body, 'body')
  }
  const input = body as Record<string, unknown>
  const fields = new FieldChecks()
  const name = fields.check(NEW_PET.name, input.name, 'name')
  const categoryId = fields.check(NEW_PET.categoryId, input.categoryId, 'categoryId')
  const status = fields.check(NEW_PET.status, input.status, 'status')
  fields.done()
  // A pet created without status has no status key.
  return status === undefined ? { name, categoryId } : { name, categoryId, status }
}
