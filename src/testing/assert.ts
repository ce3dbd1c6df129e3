/**
 * The few assertions the conformance suite needs. They live here rather than
 * in `node:assert` so the suite runs under any test runner on any runtime.
 *
 * @module
 */

/** A failed expectation of the suite. Carries `actual` and `expected` so runners that diff (vitest) can show one. */
export class ConformanceError extends Error {
  override name = 'ConformanceError'
  actual?: unknown
  expected?: unknown

  constructor(message: string, values?: { actual: unknown; expected: unknown } | { cause: unknown }) {
    super(message, values && 'cause' in values ? { cause: values.cause } : undefined)
    if (values && 'actual' in values) {
      this.actual = values.actual
      this.expected = values.expected
    }
  }
}

/** A value as a reader wants it in a message: strings quoted and escaped, bigints marked, long output cut. */
export function show(value: unknown): string {
  let text: string
  if (value === undefined) text = 'undefined'
  else if (typeof value === 'bigint') text = `${value}n`
  else if (typeof value === 'function') text = `[function ${value.name || 'anonymous'}]`
  else {
    try {
      text =
        JSON.stringify(value, (_key, item) =>
          typeof item === 'bigint' ? `${item}n` : item === undefined ? '<undefined>' : item,
        ) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  return text.length > 400 ? `${text.slice(0, 400)}… (${text.length} characters)` : text
}

/** Fails with `message` unless `value` is truthy. */
export function ok(value: unknown, message: string): asserts value {
  if (!value) throw new ConformanceError(message)
}

/** Fails unless `actual` is `expected` (`Object.is`). */
export function equal<T>(actual: unknown, expected: T, message: string): asserts actual is T {
  if (!Object.is(actual, expected)) {
    throw new ConformanceError(`${message}: expected ${show(expected)}, got ${show(actual)}`, { actual, expected })
  }
}

/**
 * Fails unless `actual` and `expected` hold the same plain data: same
 * primitives, arrays of the same length, objects with exactly the same keys
 * (a key set to `undefined` is not a missing key). The message names the
 * first place they differ.
 */
export function deepEqual<T>(actual: unknown, expected: T, message: string): asserts actual is T {
  const difference = firstDifference(actual, expected, '')
  if (difference !== undefined) {
    throw new ConformanceError(`${message}: ${difference}`, { actual, expected })
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Where `actual` and `expected` first differ, as a sentence, or `undefined` when they are equal. */
function firstDifference(actual: unknown, expected: unknown, path: string): string | undefined {
  const where = path === '' ? '' : `at ${path}: `
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${where}expected an array, got ${show(actual)}`
    for (let index = 0; index < Math.min(actual.length, expected.length); index++) {
      const difference = firstDifference(actual[index], expected[index], `${path}[${index}]`)
      if (difference !== undefined) return difference
    }
    if (actual.length !== expected.length) {
      return `${where}expected ${expected.length} items, got ${actual.length}${
        actual.length > expected.length ? `; the first extra one is ${show(actual[expected.length])}` : ''
      }`
    }
    return undefined
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return `${where}expected a plain object, got ${show(actual)}`
    for (const key of Object.keys(expected)) {
      if (!Object.hasOwn(actual, key)) return `${where}key ${show(key)} is missing`
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) return `${where}unexpected key ${show(key)} = ${show(actual[key])}`
    }
    for (const key of Object.keys(expected)) {
      const difference = firstDifference(actual[key], expected[key], `${path}.${key}`)
      if (difference !== undefined) return difference
    }
    return undefined
  }
  if (Object.is(actual, expected)) return undefined
  if (typeof actual === 'string' && typeof expected === 'string') return `${where}${stringDifference(actual, expected)}`
  return `${where}expected ${show(expected)} (${typeof expected}), got ${show(actual)} (${typeof actual})`
}

/** Two unequal strings described by their code points, since the difference may be invisible (a BOM, NFC vs NFD). */
function stringDifference(actual: string, expected: string): string {
  const got = [...actual]
  const want = [...expected]
  let index = 0
  while (index < got.length && index < want.length && got[index] === want[index]) index++
  const point = (character: string | undefined) =>
    character === undefined ? 'the end' : `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
  return (
    `expected ${show(expected)} (${want.length} code points), got ${show(actual)} (${got.length} code points); ` +
    `first difference at code point ${index}: expected ${point(want[index])}, got ${point(got[index])}`
  )
}
