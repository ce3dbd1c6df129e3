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

/** The same for whole schemas the converter cannot translate (`categoryId`, which may be a bigint). */
export const jsonSchemaOfSchema = new WeakMap<object, Record<string, unknown>>()

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

/** An action the document passes over (its result is already described). */
function inTheDocument<A extends object>(action: A): A {
  jsonSchemaOfAction.set(action, {})
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

/** A pet's name: 1 to 255 characters, not only whitespace, storable by every database. */
export const NameSchema = v.pipe(
  v.string('must be a string'),
  // Code points never outnumber UTF-16 units: the walk is needed only past 255 units.
  checkWithSchema(
    (name: string) => name.length > 0 && (name.length <= 255 || codePoints(name) <= 255),
    'must be 1 to 255 characters long',
    {
      minLength: 1,
      maxLength: 255,
    },
  ),
  v.regex(/\S/, 'must not be only whitespace'),
  // A lone surrogate (JSON allows "\ud800") has no UTF-8 form: a database would store a different name.
  checkWithSchema((name: string) => !LONE_SURROGATE.test(name), 'must be valid Unicode text', {}),
  // PostgreSQL text cannot hold U+0000, and Node 22's node:sqlite cuts text short at it.
  checkWithSchema((name: string) => !name.includes('\u0000'), 'must not contain U+0000', {}),
)

/** The int64 range, −2^63 … 2^63−1. */
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/**
 * An int64 as the API holds it: a `number` within ±(2^53−1), where a number
 * is exact, and a `bigint` beyond, where it would not be. Each value has one
 * form, so equal values compare equal with `===`.
 */
export type Int64 = number | bigint

/**
 * The {@link Int64} form of an integer given as a number, a bigint or decimal
 * text (how SQL drivers return int8/BIGINT): a number when it is safe, else a bigint.
 *
 * @example
 * ```ts
 * int64Of('9223372036854775807') // → 9223372036854775807n
 * int64Of(7n) // → 7
 * ```
 */
export function int64Of(value: number | bigint | string): Int64 {
  if (typeof value === 'number') return value
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : BigInt(value)
}

/** What the OpenAPI document says of `categoryId`; valibot's converter knows no bigint. */
const CATEGORY_ID_JSON_SCHEMA = {
  type: 'integer',
  // No minimum/maximum: a JSON number cannot write 2^63−1 exactly for every reader; int64 says the range.
  format: 'int64',
  description:
    'Any 64-bit integer, -9223372036854775808 to 9223372036854775807. Values beyond ±(2^53−1) are kept and ' +
    "returned exactly, digit for digit: read them with a JSON parser that keeps big integers (JavaScript's " +
    '`JSON.parse` rounds them).',
}

/** A number or a bigint: the start of `categoryId`'s schema, and where its JSON Schema is told. */
const numberOrBigint = v.custom<Int64>(
  (input) => typeof input === 'number' || typeof input === 'bigint',
  'must be an integer',
)
jsonSchemaOfSchema.set(numberOrBigint, CATEGORY_ID_JSON_SCHEMA)

/**
 * Any int64, in its {@link Int64} form (a number when safe, else a bigint). A pet field of this
 * schema is stored exactly (see pet-fields.ts): SQL `bigint`, read back as decimal text.
 */
export const Int64Schema = v.pipe(
  numberOrBigint,
  checkWithSchema((id: Int64) => typeof id === 'bigint' || Number.isInteger(id), 'must be an integer', {}),
  checkWithSchema((id: Int64) => id >= INT64_MIN, `must be at least ${INT64_MIN}`, {}),
  checkWithSchema((id: Int64) => id <= INT64_MAX, `must be at most ${INT64_MAX}`, {}),
  // A number beyond 2^53 may already be another integer than the one meant (2^53 + 1 is read as 2^53).
  checkWithSchema(
    (id: Int64) => typeof id === 'bigint' || Number.isSafeInteger(id),
    'must be a bigint beyond ±(2^53−1): a number there is not exact',
    {},
  ),
  inTheDocument(v.transform((id: Int64) => int64Of(id))),
)

/** The body of `POST /pets`. Unknown properties (`id` included) are dropped. */
export const NewPetSchema = v.object(
  {
    name: NameSchema,
    categoryId: Int64Schema,
    status: v.optional(PetStatusSchema),
  },
  'must be a JSON object',
)

/** A pet as the service returns it. */
export const PetSchema = v.object({
  id: v.pipe(v.number(), v.integer(), int64, v.minValue(1), v.maxValue(SAFE)),
  ...NewPetSchema.entries,
})

/**
 * A pet of a seed (`--seed FILE`, `seed()` of `petstore-server/testing`): a new pet, and the id it
 * keeps when one is given.
 */
export const SeedPetSchema = v.object(
  {
    id: v.optional(
      v.pipe(
        v.number('must be an integer from 1 to 2^53−1'),
        v.safeInteger('must be an integer from 1 to 2^53−1'),
        v.minValue(1, 'must be an integer from 1 to 2^53−1'),
      ),
    ),
    ...NewPetSchema.entries,
  },
  'must be a pet, { name, categoryId, status?, id? }',
)

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

/** A decimal integer as written in a URL: digits, with an optional minus sign (`limit=-1` is out of range, not malformed). */
const DECIMAL = /^-?[0-9]+$/
const decimal = v.regex(DECIMAL, 'must be a decimal integer')

/** `limit` of `GET /pets`: a decimal integer 1..100, default 20. */
export const LimitSchema = v.pipe(
  v.optional(v.string(), '20'),
  decimal,
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
  decimal,
  checkWithSchema(
    (id: string) => {
      if (!DECIMAL.test(id)) return true // `decimal` said why
      // Leading zeros change nothing (`007` is 7, however many); `-0…0` is 0.
      const digits = id.replace(/^(-?)0+(?=[0-9])/, '$1')
      // Up to 18 digits is always an int64; past 20 characters never (and BigInt() of a million digits is slow).
      if (digits.length <= 18) return true
      return digits.length <= 20 && BigInt(digits) >= INT64_MIN && BigInt(digits) <= INT64_MAX
    },
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
/**
 * What a client sends to create a pet. `categoryId` is an {@link Int64}: a
 * number within ±(2^53−1), a bigint beyond (up to ±2^63), so numbers work as before.
 *
 * @example
 * ```ts
 * const rex: NewPet = { name: 'Rex', categoryId: 1 }
 * const big: NewPet = { name: 'Big', categoryId: 9223372036854775807n }
 * ```
 */
export type NewPet = v.InferOutput<typeof NewPetSchema>
/**
 * A stored pet. `status` is absent when it was not given. `categoryId` is an
 * {@link Int64}, a bigint only beyond ±(2^53−1): a store gives it back in that form.
 */
export type Pet = v.InferOutput<typeof PetSchema>
/** The JSON body of every error response. */
export type ErrorBody = v.InferOutput<typeof ErrorSchema>
