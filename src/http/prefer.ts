/**
 * The test preferences of one request, read from `Prefer` (RFC 7240):
 * `Prefer: fault=unavailable` and `Prefer: delay=250`. Other preferences
 * are none of ours and ignored; a value of ours that makes no sense is a 400.
 *
 * @module
 */
import { ErrorAnswer } from './errors.js'

export const FAULT_KINDS = ['unavailable', 'after-commit', 'rate-limited', 'internal', 'reset'] as const
/** What an injected fault does: see docs/testing-clients.md. */
export type FaultKind = (typeof FAULT_KINDS)[number]

/** The longest delay, asked or drawn: past it, the client's own timeout is what is tested. */
export const MAX_DELAY_MS = 30_000

/** What a request asked for. */
export interface TestPreferences {
  fault?: FaultKind
  delay?: number
}

const refusal = (message: string) => new ErrorAnswer(400, 'bad_request', message)

/**
 * The `fault` and `delay` of a `Prefer` header (several headers arrive joined by commas); only
 * the first of each counts, as RFC 7240 says.
 *
 * @example
 * ```ts
 * testPreferences('respond-async, fault=after-commit; x=1, delay="20"') // → { fault: 'after-commit', delay: 20 }
 * ```
 */
export function testPreferences(header: string): TestPreferences | ErrorAnswer {
  const asked: TestPreferences = {}
  for (const preference of header.split(',')) {
    const [token = ''] = preference.split(';', 1)
    const equals = token.indexOf('=')
    const name = (equals < 0 ? token : token.slice(0, equals)).trim().toLowerCase()
    if (name !== 'fault' && name !== 'delay') continue
    if (asked[name] !== undefined) continue
    const value =
      equals < 0
        ? ''
        : token
            .slice(equals + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1')
    if (name === 'fault') {
      if (!(FAULT_KINDS as readonly string[]).includes(value)) {
        return refusal(`Prefer: fault must be one of ${FAULT_KINDS.join(', ')}, got "${value.slice(0, 40)}"`)
      }
      asked.fault = value as FaultKind
    } else {
      const delay = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN
      if (!(delay <= MAX_DELAY_MS)) {
        return refusal(
          `Prefer: delay must be whole milliseconds from 0 to ${MAX_DELAY_MS}, got "${value.slice(0, 40)}"`,
        )
      }
      asked.delay = delay
    }
  }
  return asked
}
