/**
 * Integers beyond 2^53 read exactly from JSON text. `JSON.parse` rounds
 * them to the nearest double (9007199254740993 becomes 9007199254740992), so
 * when a parsed value is such a double, its digits are read again from the
 * text. Only then: the usual body, with safe integers, costs nothing more.
 *
 * Node ≥ 21 would give the digits to a `JSON.parse` reviver
 * (`context.source`), but Node 20, which `engines` allows, does not; this
 * way works on every runtime.
 *
 * @module
 */

/** A digit followed by a fraction or an exponent, wherever it is in the text (a name's `R2e` too: then it is only looked at). */
const FRACTION_OR_EXPONENT = /[0-9][.eE]/

/** A JSON string, or a number token (on text `JSON.parse` accepted, nothing else starts with `-` or a digit). */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*/g

/**
 * The exact value of a JSON number token: a bigint for an integer,
 * `undefined` for a fraction, `null` for an integer past 21 digits, which
 * is left as parsed (it is out of int64 range either way, and 1e999999 as a
 * bigint would take a megabyte).
 */
function integerOf(token: string): bigint | undefined | null {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(token)
  if (match === null) return null
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match
  let digits = `${whole}${fraction}`.replace(/^0+/, '')
  let shift = Number(exponent) - fraction.length
  const significant = digits.replace(/0+$/, '')
  shift += digits.length - significant.length
  digits = significant
  if (digits === '') return 0n
  if (shift < 0) return undefined
  if (digits.length + shift > 21) return null
  return BigInt(`${sign}${digits}`) * 10n ** BigInt(shift)
}

/**
 * `body` (parsed from `text`) with each of `keys` that `JSON.parse` read as
 * an integer beyond ±(2^53−1) replaced by its exact value, a bigint, and each
 * it read as an integer from a number that is none replaced by `NaN`
 * (9007199254740993.5 reads as the integer 9007199254740994, 1e-400 as 0), so
 * that validation says "must be an integer". Other values stay as parsed.
 *
 * @example
 * ```ts
 * const text = '{"n":9223372036854775807}'
 * withExactIntegers(text, JSON.parse(text), ['n']) // → { n: 9223372036854775807n }
 * ```
 */
export function withExactIntegers(text: string, body: unknown, keys: readonly string[]): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body
  const inexact = inexactKeys(text, body as Record<string, unknown>, keys)
  if (inexact === undefined) return body
  return exactOf(body as Record<string, unknown>, digitsOf(text) as Record<string, string>, inexact)
}

/**
 * {@link withExactIntegers} for each object of an array (a seed file): `list`, parsed from
 * `text`, with the `keys` of each of its objects read exactly.
 *
 * @example
 * ```ts
 * const text = '[{"n":1},{"n":9007199254740993}]'
 * withExactIntegersEach(text, JSON.parse(text), ['n']) // → [{ n: 1 }, { n: 9007199254740993n }]
 * ```
 */
export function withExactIntegersEach(text: string, list: unknown, keys: readonly string[]): unknown {
  if (!Array.isArray(list)) return list
  const inexact = list.map((entry) =>
    typeof entry === 'object' && entry !== null && !Array.isArray(entry)
      ? inexactKeys(text, entry as Record<string, unknown>, keys)
      : undefined,
  )
  if (inexact.every((keys) => keys === undefined)) return list
  const digits = digitsOf(text) as Record<string, string>[]
  return list.map((entry, index) => {
    const keys = inexact[index]
    return keys === undefined ? entry : exactOf(entry as Record<string, unknown>, digits[index] ?? {}, keys)
  })
}

/** The `keys` of `object` whose integer `JSON.parse` may have rounded; `undefined` for none. */
function inexactKeys(text: string, object: Record<string, unknown>, keys: readonly string[]): string[] | undefined {
  // A loop, not `filter`: the usual body has no such integer, and then nothing is allocated.
  let inexact: string[] | undefined
  // A safe integer may also have been rounded to: 1e-400 reads as 0, 1.0000000000000001 as 1. Only text
  // with a digit before a `.` or an exponent can hold such a number; then its digits are read again too.
  let written: boolean | undefined
  for (const key of keys) {
    const value = object[key]
    if (typeof value !== 'number' || !Number.isInteger(value)) continue
    if (Number.isSafeInteger(value)) {
      written ??= FRACTION_OR_EXPONENT.test(text)
      if (!written) continue
    }
    inexact ??= []
    inexact.push(key)
  }
  return inexact
}

/** `text` parsed with every number a string of its own digits; the last duplicate key still wins, as in JSON.parse. */
const digitsOf = (text: string): unknown =>
  JSON.parse(text.replace(TOKEN, (token) => (token[0] === '"' ? token : `"${token}"`)))

/** `object` with each of `inexact` read again from `digits`, its own numbers as text. */
function exactOf(
  object: Record<string, unknown>,
  digits: Record<string, string>,
  inexact: readonly string[],
): Record<string, unknown> {
  const exact = { ...object }
  for (const key of inexact) {
    const integer = integerOf(digits[key] as string)
    if (integer === null) continue
    // A safe integer stays a number (`1.0`, `1e2`), as JSON.parse gave it.
    exact[key] = integer === undefined ? Number.NaN : Number.isSafeInteger(Number(integer)) ? Number(integer) : integer
  }
  return exact
}
