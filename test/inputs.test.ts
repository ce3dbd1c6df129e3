/**
 * src/api/inputs.ts checks a list query and a new pet field by field, and a
 * pet id without the schema when it is plain digits, where `validate` of
 * the whole schema is the reference: for any input,
 * both must give the same output, or the same 400 (message, details and body).
 * The inputs are what reaches them: query values as text, bodies parsed from JSON.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { listQueryOf, newPetOf, petIdOf } from '../src/api/inputs.js'
import { ListQuerySchema, NewPetSchema, PetIdSchema } from '../src/api/schemas.js'
import { FieldChecks, RememberedChecks, validate } from '../src/api/validate.js'
import { ErrorAnswer } from '../src/http/errors.js'

/** What a check gives: its output, or its refusal as the API answers it. Neither throws. */
function outcome(check: () => unknown) {
  const output = check()
  if (!(output instanceof ErrorAnswer)) return { output }
  const { status, code, message, details, body } = output
  return { status, code, message, details, body }
}

const queryValue = fc.option(
  fc.oneof(
    fc.constantFrom('20', '1', '100', '0', '101', '-1', '007', '1e2', '2.5', ' 5', '', 'sold', 'available', 'pending'),
    fc.constantFrom('SOLD', 'x', '12.abcdefghijklmnop', '99999999999999999999'),
    fc.string({ maxLength: 12 }),
  ),
  { nil: undefined },
)

/** What a body's field can hold: a JSON value, or a bigint where JSON held an integer beyond 2^53. */
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.string({ maxLength: 300 }),
  fc.constantFrom('Rex', ' ', '', 'a\u0000b', '\ud800', 'x'.repeat(256), 'available', 'pending', 'sold'),
  fc.constantFrom('x'.repeat(255), ' '.repeat(255), '  a ', '\t', 'a\tb', '~\x7f', 'é', '\u00a0'),
  fc.integer(),
  fc.double(),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
  fc.constantFrom(2 ** 53, -(2 ** 53), 9007199254740993n, 2n ** 63n - 1n, 2n ** 63n),
)

const petLike = fc.record(
  { name: anyValue, categoryId: anyValue, status: anyValue, id: anyValue, extra: anyValue },
  { requiredKeys: [] },
)

describe('field-by-field checks agree with their object schemas', () => {
  it('a list query: the same page asked for, or the same 400', () => {
    fc.assert(
      fc.property(queryValue, queryValue, queryValue, (limit, status, cursor) => {
        const raw = { limit, status, cursor }
        assert.deepEqual(
          outcome(() => listQueryOf(raw)),
          outcome(() => validate(ListQuerySchema, raw, 'query')),
        )
      }),
      { numRuns: 3000 },
    )
  })

  it('a new pet: the same pet (unknown keys dropped, status only when given), or the same 400', () => {
    fc.assert(
      fc.property(fc.oneof(petLike, anyValue, fc.array(anyValue, { maxLength: 3 })), (body: unknown) => {
        assert.deepEqual(
          outcome(() => newPetOf(body)),
          // What the API did before: the whole object schema, an array refused as no object.
          outcome(() => validate(NewPetSchema, Array.isArray(body) ? null : body, 'body')),
        )
      }),
      { numRuns: 3000 },
    )
  })

  it('a new pet given without status has no status key', () => {
    assert.equal('status' in newPetOf({ name: 'Rex', categoryId: 1 }), false)
    assert.deepEqual(newPetOf({ name: 'Rex', categoryId: 1, status: 'sold', id: 9 }), {
      name: 'Rex',
      categoryId: 1,
      status: 'sold',
    })
  })

  it('a pet id: the same id, or the same 400', () => {
    const digits = fc.stringMatching(/^-?[0-9]{1,22}$/)
    const idText = fc.oneof(
      digits,
      fc.constantFrom(
        '0',
        '007',
        '-0',
        `${'0'.repeat(25)}7`,
        '999999999999999',
        '9007199254740993',
        '9223372036854775807',
        '9223372036854775808',
      ),
      fc.constantFrom('-9223372036854775808', '-9223372036854775809', '1e3', '0x10', ' 1', '1 ', '', '+1', '١'),
      fc.string({ maxLength: 20 }),
    )
    fc.assert(
      fc.property(idText, (text) => {
        assert.deepEqual(
          outcome(() => petIdOf(text)),
          outcome(() => validate(PetIdSchema, text, 'petId')),
        )
      }),
      { numRuns: 3000 },
    )
  })
})

describe('RememberedChecks', () => {
  const limit = ListQuerySchema.entries.limit

  it('gives a remembered input the output the schema gave it, and checks a refused one every time', () => {
    const remembered = new RememberedChecks(limit, 4)
    for (let round = 0; round < 2; round++) {
      const fields = new FieldChecks()
      assert.equal(fields.checkRemembered(remembered, '7', 'limit'), 7)
      assert.equal(fields.checkRemembered(remembered, undefined, 'limit'), 20)
      assert.equal(fields.checkRemembered(remembered, '500', 'limit'), undefined)
      assert.match(fields.refusal()?.message ?? '', /^limit: must be between 1 and 100/)
    }
    assert.deepEqual(
      [...remembered.outputs],
      [
        ['7', 7],
        [undefined, 20],
      ],
    )
  })

  it('keeps at most `kept` inputs, so that inputs made up one after another cannot grow it', () => {
    const remembered = new RememberedChecks(limit, 4)
    for (let i = 1; i <= 100; i++) {
      const fields = new FieldChecks()
      assert.equal(fields.checkRemembered(remembered, `0${i}`, 'limit'), i)
      assert.equal(fields.refusal(), undefined)
      assert.ok(remembered.outputs.size <= 4, `${remembered.outputs.size} kept`)
    }
  })

  it('remembers an input it took even where another field of the same query failed', () => {
    const remembered = new RememberedChecks(limit, 4)
    const fields = new FieldChecks()
    fields.check(ListQuerySchema.entries.status, 'lost', 'status')
    assert.equal(fields.checkRemembered(remembered, '9', 'limit'), 9)
    assert.equal(fields.checkRemembered(remembered, '0', 'limit'), undefined)
    assert.match(
      fields.refusal()?.message ?? '',
      /^status: must be one of available, pending, sold; limit: must be between/,
    )
    assert.deepEqual([...remembered.outputs], [['9', 9]])
  })
})
