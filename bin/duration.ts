/**
 * A duration as the binary's flags take it: `24h`, `30m`, `90s`, `500ms`, `1d`, or a bare number
 * of milliseconds, as the other time flags take theirs.
 *
 * @module
 */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * The milliseconds `text` names, or a message saying what it must be, for a value from `min` to
 * `max` ms (`max` named in words by `maxText`).
 *
 * @example
 * ```ts
 * durationMs('24h', 1, 31_622_400_000, '366d') // → 86400000
 * durationMs('1 day', 1, 31_622_400_000, '366d') // → 'a whole number of ms, or one followed by ms, s, m, h or d, …'
 * ```
 */
export function durationMs(text: string, min: number, max: number, maxText: string): number | string {
  const [, digits, unit = 'ms'] = /^([0-9]{1,12})(ms|s|m|h|d)?$/.exec(text.trim()) ?? []
  const ms = digits === undefined ? Number.NaN : Number(digits) * (UNITS[unit] as number)
  if (ms >= min && ms <= max) return ms
  return `a whole number of ms, or one followed by ms, s, m, h or d (24h), from ${min} ms to ${maxText}`
}
