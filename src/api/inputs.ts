/**
 * The inputs of `GET /pets` and `POST /pets`, checked field by field by the
 * entries of their object schemas: the same checks, output and errors as
 * `validate(ListQuerySchema, …)` and `validate(NewPetSchema, …)`, without
 * valibot's generic walk over an object. A value the schema would give back
 * as it is (a page's `limit`, a plain name, a safe integer) skips the
 * schema's pipe; test/inputs.test.ts holds every shortcut to the schemas,
 * which stay the one source of the checks, the types and the document.
 *
 * @module
 */
import type { ErrorAnswer } from '../http/errors.js'
import { getField, PET_FIELDS, setField } from './pet-fields.js'
import { ListQuerySchema, NameSchema, type NewPet, NewPetSchema, PetIdSchema, type PetStatus } from './schemas.js'
import { FieldChecks, RememberedChecks, validate } from './validate.js'

const QUERY = ListQuerySchema.entries
const LIMITS = new RememberedChecks(QUERY.limit)
const STATUSES = new RememberedChecks(QUERY.status)
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
 * The checked query of `GET /pets`, or the 400 `validation_error` naming every bad parameter.
 *
 * @example
 * ```ts
 * listQueryOf({ limit: undefined, status: 'sold', cursor: undefined }) // → { limit: 20, status: 'sold', cursor: undefined }
 * listQueryOf({ limit: '0', status: undefined, cursor: undefined }) // → an ErrorAnswer: "limit: …"
 * ```
 */
export function listQueryOf(raw: RawListQuery): ListQueryInput | ErrorAnswer {
  const fields = new FieldChecks()
  const limit = fields.checkRemembered(LIMITS, raw.limit, 'limit')
  const status = fields.checkRemembered(STATUSES, raw.status, 'status')
  // Absent, as on every first page, it is what its optional schema makes of absence.
  const cursor = raw.cursor === undefined ? undefined : fields.check(QUERY.cursor, raw.cursor, 'cursor')
  return fields.refusal() ?? { limit, status, cursor }
}

/**
 * The checked body of `POST /pets` (unknown keys dropped, no `status` key
 * when none was given), or the 400 `validation_error` naming every bad field.
 *
 * @example
 * ```ts
 * newPetOf({ ...rex, id: 7 }) // → rex: unknown keys are dropped
 * ```
 */
export function newPetOf(body: unknown): NewPet | ErrorAnswer {
  // No object: the schema says what is wrong (an array as `null`: valibot's object schema takes arrays; the API not).
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return validate(NewPetSchema, Array.isArray(body) ? null : body, 'body')
  }
  const input = body as Record<string, unknown>
  const fields = new FieldChecks()
  const pet: Record<string, unknown> = {}
  for (let i = 0; i < CHECKS.length; i++) {
    const { key, takes, check } = CHECKS[i] as FieldCheck
    const given = getField(input, i, key)
    const value = takes(given) ? given : check(fields, given)
    // A pet created without an optional field has no key for it.
    if (value !== undefined) setField(pet, i, key, value)
  }
  return fields.refusal() ?? (pet as NewPet)
}

/** How one field of a new pet is checked: `takes` what its schema would take as it is, else `check`. */
interface FieldCheck {
  key: string
  takes: (given: unknown) => boolean
  check: (fields: FieldChecks, given: unknown) => unknown
}

const never = () => false

/**
 * Each field's check, by its entry of the schema. Where the schema's steps would give back what
 * was given, for the values nearly every body sends, a shortcut says so: plain names, safe
 * integers; an enum's few words are remembered.
 */
const CHECKS: readonly FieldCheck[] = PET_FIELDS.map(({ key, kind }): FieldCheck => {
  const schema = NEW_PET[key]
  if (kind === 'enum') {
    const remembered = new RememberedChecks(schema)
    return { key, takes: never, check: (fields, given) => fields.checkRemembered(remembered, given, key) }
  }
  const takes = kind === 'int64' ? Number.isSafeInteger : schema === NameSchema ? plainName : never
  return { key, takes, check: (fields, given) => fields.check(schema, given, key) }
})

/**
 * A name the schema takes as it is: 1 to 255 characters of printable ASCII, not all spaces (so
 * no surrogate, no U+0000, and as many code points as characters). Nearly every name is one.
 */
function plainName(name: unknown): name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 255) return false
  let printed = false
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i)
    if (code < 0x20 || code > 0x7e) return false
    if (code !== 0x20) printed = true
  }
  return printed
}

/** Up to 15 digits: an id the schema takes as it is, whatever they are (any such number is a safe integer). */
const PLAIN_ID = /^[0-9]{1,15}$/

/**
 * The `petId` of `GET /pets/{petId}` (percent-decoded), or the 400
 * `validation_error`: what `validate(PetIdSchema, …)` gives, without the
 * schema's seven steps for the id nearly every request sends.
 *
 * @example
 * ```ts
 * petIdOf('42') // → 42
 * petIdOf('-1') // → -1 (an int64: no pet has it, a 404)
 * ```
 */
export function petIdOf(text: string): number | ErrorAnswer {
  return PLAIN_ID.test(text) ? Number(text) : validate(PetIdSchema, text, 'petId')
}
