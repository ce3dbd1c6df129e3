/**
 * The `Idempotency-Key` of a create: the key read from its header, the label of the API key it
 * is scoped to, and the fingerprint of its payload (IETF httpapi draft "The Idempotency-Key HTTP
 * Header Field").
 *
 * @module
 */
import { ErrorAnswer } from '../http/errors.js'
import { sha256Hex } from '../util/sha256.js'
import { bearerToken } from './auth.js'

/** The request header, as the API reads it (lower case), and the marker of a replayed answer. */
export const IDEMPOTENCY_KEY = 'idempotency-key'
export const REPLAYED = 'idempotent-replayed'

/** The longest key, in characters. */
export const MAX_KEY_LENGTH = 255

/** How long a key is kept when no TTL is given: a day, as Stripe keeps them. */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000

const refused = (why: string) => new ErrorAnswer(400, 'invalid_idempotency_key', `Idempotency-Key ${why}`)
const twice = () =>
  refused('was given more than once; send one key (a bare key holds no ",": quote it as a string, "a,b")')

/** What is wrong with `key`'s characters, if anything: it must be 1 to 255 visible ASCII characters. */
function problemOf(key: string): ErrorAnswer | undefined {
  if (key === '') return refused('is empty; send 1 to 255 visible ASCII characters')
  if (key.length > MAX_KEY_LENGTH) return refused(`is ${key.length} characters long; at most ${MAX_KEY_LENGTH}`)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (/[\x00-\x1f\x7f]/.test(key)) return refused('holds a control character; send visible ASCII only')
  if (!/^[\x21-\x7e]+$/.test(key)) return refused('holds a space or a character beyond ASCII; send visible ASCII only')
  return undefined
}

/**
 * The key a header names, or the 400 that says why it names none. A Structured Field string
 * (`"abc-123"`, RFC 9651) and the bare form most SDKs send (`abc-123`) name the same key. Fields
 * given twice arrive joined by `,`: so a bare key holds no comma, and a string is followed by none.
 *
 * @example
 * ```ts
 * idempotencyKeyOf('"abc-123"') // → 'abc-123'
 * idempotencyKeyOf('abc-123') // → 'abc-123'
 * idempotencyKeyOf('a, b') // → ErrorAnswer 400 invalid_idempotency_key
 * ```
 */
export function idempotencyKeyOf(header: string): string | ErrorAnswer {
  const value = header.trim()
  if (!value.startsWith('"')) return value.includes(',') ? twice() : (problemOf(value) ?? value)
  let key = ''
  for (let i = 1; i < value.length; i++) {
    const char = value[i] as string
    if (char === '\\') {
      const next = value[++i]
      if (next !== '"' && next !== '\\') return refused('is a string with an escape other than \\" or \\\\')
      key += next
    } else if (char === '"') {
      const rest = value.slice(i + 1).trim()
      if (rest === '') return problemOf(key) ?? key
      return rest.startsWith(',') ? twice() : refused('has text after its closing quote')
    } else {
      key += char
    }
  }
  return refused('is a string without its closing quote')
}

/**
 * The label keys are scoped to: the first 128 bits of the SHA-256 of the bearer token. The store
 * keeps this, never the API key, and two API keys never share it in practice.
 */
export function scopeOf(authorization: string | null): string {
  return sha256Hex(bearerToken(authorization) ?? '').slice(0, 32)
}

/**
 * `value` as canonical JSON: object keys sorted, no spaces, integers beyond 2^53 (read as bigints)
 * digit for digit. The same JSON value gives the same text, whatever its spacing or key order.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value)
}

/** The payload's fingerprint: the SHA-256 of its canonical JSON, in hex. */
export const fingerprintOf = (body: unknown): string => sha256Hex(canonicalJson(body))
