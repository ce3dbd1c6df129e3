/**
 * The one rule for "under CI": `CI` set to anything but empty, `0` or `false`
 * (CI services set `CI=true`; `.ci/run` sets it too). Under CI a test that
 * needs something missing fails instead of skipping.
 *
 * @module
 */

/** Is this run under CI? */
export const underCi = !['', '0', 'false', undefined].includes(process.env.CI)

/**
 * `reason` as a `skip` value outside CI; under CI, throws it: what CI is meant to run must run.
 *
 * @example
 * ```ts
 * it('on Bun', { skip: skipOrFail(bunMissing) }, async () => {})
 * ```
 */
export function skipOrFail(reason: string | false): string | false {
  if (reason && underCi) throw new Error(`cannot run under CI: ${reason}`)
  return reason
}
