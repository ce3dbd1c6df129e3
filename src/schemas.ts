/**
 * The valibot schemas of the Petstore API: the one source of the TypeScript
 * types, of request validation and of the OpenAPI document.
 *
 * @module
 */
import * as v from 'valibot'

/** Largest integer a JSON number (and so a JavaScript number) holds exactly. */
const SAFE = Number.MAX_SAFE_INTEGER

/**
 * JSON Schema keywords for actions that `@valibot/to-json-schema` cannot
 * translate by itself (custom checks). The OpenAPI builder reads this map.
 */
export const jsonSchemaOfAction = new WeakMap<object, Record<string, unknown>>()

/** A check whose JSON Schema equivalent is known, so the document stays exact. */
function checkWithSchema<T>(
  requirement: (input: T) => boolean,
  message: string,
  jsonSchema: Record<string, unknown>,
): v.CheckAction<T, string> {
  const action = v.check(requirement, message)
  jsonSchemaOfAction.set(action, jsonSchema)
  return action
}

/** OpenAPI's `format: int64`, which JSON Schema itself does not name. */
const int64 = v.metadata<number, { format: 'int64' }>({ format: 'int64' })

/** Counts Unicode code points, as JSON Schema `maxLength` and SQL `varchar(n)` do. */
function codePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** Availability of a pet. */
export const PetStatusSchema = v.picklist(['available', 'pending', 'sold'], 'must be one of available, pending, sold')

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const NameSchema = v.pipe(
  v.string('must be a string'),
  checkWithSchema((name: string) => name.length > 0 && codePoints(name) <= 255, 'must be 1 to 255 characters long', {
    minLength: 1,
    maxLength: 255,
  }),
  v.regex(/\S/, 'must not be only whitespace'),
  // A lone surrogate (JSON allows "\ud800") has no UTF-8 form: a database would store a different name.
  checkWithSchema((name: string) => !LONE_SURROGATE.test(name), 'must be valid Unicode text', {}),
  // PostgreSQL text cannot hold U+0000, and Node 22's node:sqlite cuts text short at it.
  checkWithSchema((name: string) => !name.includes('\u0000'), 'must not contain U+0000', {}),
)

const CategoryIdSchema = v.pipe(
  v.number('must be an integer'),
  v.integer('must be an integer'),
  int64,
  v.minValue(-SAFE, `must be at least ${-SAFE}`),
  v.maxValue(SAFE, `must be at most ${SAFE}`),
)

/** The body of `POST /pets`. Unknown properties (`id` included) are dropped. */
export const NewPetSchema = v.object(
  {
    name: NameSchema,
    categoryId: CategoryIdSchema,
    status: v.optional(PetStatusSchema),
  },
  'must be a JSON object',
)

/** A pet as the service returns it. */
export const PetSchema = v.object({
  id: v.pipe(v.number(), v.integer(), int64, v.minValue(1), v.maxValue(SAFE)),
  ...NewPetSchema.entries,
})

/** The body of `GET /pets`: a bare array of pets. */
export const PetsSchema = v.array(PetSchema)

/** Every error body. `status` always equals the HTTP status of the response. */
export const ErrorSchema = v.object({
  code: v.string(),
  message: v.string(),
  status: v.pipe(v.number(), v.integer()),
  details: v.optional(
    v.array(
      v.object({
        path: v.string(),
        message: v.string(),
      }),
    ),
  ),
})

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** A decimal integer as written in a URL: digits only, with an optional minus sign. */
const decimal = (sign: boolean) => v.regex(sign ? /^-?[0-9]+$/ : /^[0-9]+$/, 'must be a decimal integer')

/** `limit` of `GET /pets`: a decimal integer 1..100, default 20. */
export const LimitSchema = v.pipe(
  v.optional(v.string(), '20'),
  decimal(false),
  v.transform(Number),
  v.number(),
  v.integer(),
  v.minValue(1, 'must be between 1 and 100'),
  v.maxValue(100, 'must be between 1 and 100'),
  // The default above applies to the string form; the document shows it as a number.
  v.metadata<number, { default: 20 }>({ default: 20 }),
)

/** Query of `GET /pets`. `cursor` is the opaque token of a `Link: rel="next"`. */
export const ListQuerySchema = v.object({
  limit: LimitSchema,
  status: v.optional(PetStatusSchema),
  cursor: v.optional(v.string()),
})

/**
 * `petId` of `GET /pets/{petId}`: a decimal int64. Values beyond the safe
 * integer range are valid int64 but can name no pet (ids are safe integers).
 */
export const PetIdSchema = v.pipe(
  v.string(),
  decimal(true),
  checkWithSchema(
    (id: string) =>
      !/^-?[0-9]+$/.test(id) ||
      // Up to 18 digits is always an int64; past 20 characters never (and BigInt() of a million digits is slow).
      id.length <= 18 ||
      (id.length <= 20 && BigInt(id) >= INT64_MIN && BigInt(id) <= INT64_MAX),
    'must be a 64-bit integer',
    {},
  ),
  v.transform(Number),
  v.number(),
  v.integer(),
  int64,
)

/** Availability of a pet: `available`, `pending` or `sold`. */
export type PetStatus = v.InferOutput<typeof PetStatusSchema>
/** What a client sends to create a pet. */
export type NewPet = v.InferOutput<typeof NewPetSchema>
/** A stored pet. `status` is absent when it was not given. */
export type Pet = v.InferOutput<typeof PetSchema>
/** The JSON body of every error response. */
export type ErrorBody = v.InferOutput<typeof ErrorSchema>
