// The benches' one check of a count or a duration given on the command line or in the environment.

/** `value` as a whole number of at least 1, or throws naming where it came from (`option`). */
export function wholeNumber(option: string, value: string): number {
  const number = Number(value)
  if (!(Number.isInteger(number) && number > 0)) throw new Error(`${option} must be a whole number, at least 1`)
  return number
}
