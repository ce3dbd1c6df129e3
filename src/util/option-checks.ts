/**
 * Checks of the options the package's factories take, so that a mistake
 * (a typo in a name, a string for a number) is a `TypeError` when the
 * factory is called, naming the factory and the option, instead of a limit
 * silently off, or a 500 on every request. TypeScript catches most of these
 * at compile time; these are for JavaScript, and for values read from config.
 *
 * @module
 */

/** Edit distance, for "did you mean": option names are short, so the O(n·m) table is nothing. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row[j] = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost)
    }
    previous = row
  }
  return previous[b.length] as number
}

/** The known name `name` was most likely meant to be, if any is close. */
function nearest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase()
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of known) {
    const other = candidate.toLowerCase()
    const d = other.includes(lower) || lower.includes(other) ? 1 : distance(lower, other)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/**
 * Throws for an option `owner` does not know: a misspelt `basepath` would
 * otherwise leave the default in force without a word.
 *
 * @example
 * ```ts
 * knownOptions('createPetstore', { basepath: '/api' }, ['store', 'keys', 'basePath'])
 * // TypeError: createPetstore: unknown option "basepath" (did you mean "basePath"?)
 * ```
 */
export function knownOptions(owner: string, options: object, known: readonly string[]): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue
    const meant = nearest(name, known)
    throw new TypeError(
      `${owner}: unknown option ${JSON.stringify(name)}${meant ? ` (did you mean ${JSON.stringify(meant)}?)` : `; known: ${known.join(', ')}`}`,
    )
  }
}

/** How a value looks in a message: strings quoted, so that `'100'` and `100` differ. */
export function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  if (value === undefined) return 'undefined'
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/**
 * `value` if it is a whole number from `min` to `max` (`Infinity` too when
 * `infinity` says what it means), else a `TypeError` naming the option.
 */
export function wholeNumber(
  owner: string,
  name: string,
  value: unknown,
  { min = 0, max = Number.MAX_SAFE_INTEGER, infinity }: { min?: number; max?: number; infinity?: string } = {},
): number {
  if (value === Number.POSITIVE_INFINITY && infinity !== undefined) return value
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = `a whole number from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'any size' : max}`
    throw new TypeError(
      `${owner}: ${name} must be ${range}${infinity ? `, or Infinity (${infinity})` : ''}, got ${shown(value)}`,
    )
  }
  return value
}

/** `value` if it is a function or undefined, else a `TypeError` naming the option. */
export function optionalFunction<T>(owner: string, name: string, value: T): T {
  if (value !== undefined && typeof value !== 'function') {
    throw new TypeError(`${owner}: ${name} must be a function, got ${shown(value)}`)
  }
  return value
}

/** The longest timer `setTimeout` keeps: a longer one fires at once (Node warns, and uses 1 ms). */
export const MAX_TIMER_MS = 2_147_483_647

/**
 * Checks what every runtime adapter's `serve()` takes: an object of `known`
 * options, a handler function, a port, a host name that says something (`''`
 * would bind every interface) and a shutdown timeout that a timer can hold.
 */
export function checkServeOptions(owner: string, options: unknown, known: readonly string[]): void {
  const given = optionsObject(owner, 'options', options, '{ handler, port?, hostname? }')
  knownOptions(owner, given, known)
  const { handler, port, hostname, shutdownTimeoutMs } = given as Record<string, unknown>
  if (typeof handler !== 'function') {
    throw new TypeError(`${owner}: handler must be a fetch handler, (request) => Response; got ${shown(handler)}`)
  }
  if (port !== undefined) wholeNumber(owner, 'port', port, { max: 65_535 })
  if (hostname !== undefined && (typeof hostname !== 'string' || hostname.trim() === '')) {
    throw new TypeError(
      `${owner}: hostname must be a host name or address ('0.0.0.0' for every interface), got ${shown(hostname)}`,
    )
  }
  if (shutdownTimeoutMs !== undefined) wholeNumber(owner, 'shutdownTimeoutMs', shutdownTimeoutMs, { max: MAX_TIMER_MS })
}

/**
 * Throws for an option people carry over under another name (`filename` for `path`, `url` for
 * `connectionString`): too far from the right one for {@link knownOptions} to guess, and where
 * the options are a driver's (a pool's settings), no list of known names to check against.
 *
 * @example
 * ```ts
 * misnamedOptions('sqliteStore', { filename: './pets.db' }, { filename: 'path' })
 * // TypeError: sqliteStore: unknown option "filename" (did you mean "path"?)
 * ```
 */
export function misnamedOptions(owner: string, options: object, meant: Readonly<Record<string, string>>): void {
  for (const name of Object.keys(options)) {
    if (!Object.hasOwn(meant, name)) continue
    throw new TypeError(
      `${owner}: unknown option ${JSON.stringify(name)} (did you mean ${JSON.stringify(meant[name])}?)`,
    )
  }
}

/**
 * A URL as it may be printed: a password, in the user part or as a `password` parameter (as pg
 * and mysql2 both take it), becomes `***`. Greedy, to the last `@` before the query, so that a
 * password holding `/` or `@` is hidden whole.
 *
 * @example
 * ```ts
 * redactedUrl('postgres://app:s3cret@db/pets') // → 'postgres://***@db/pets'
 * ```
 */
export function redactedUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)([^?#]*)@/i, (_, scheme: string) => `${scheme}***@`)
    .replace(/([?&](?:password|pass|pwd|sslpassword)=)[^&#]*/gi, '$1***')
}

/** What `value` is, without showing it: for values that may hold a password (a URL, a pool's settings). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  const type = typeof value
  return type === 'object' ? 'an object' : `a ${type}`
}

/**
 * `value` if it is an object (not null, not an array), else a `TypeError` naming the
 * argument and showing what to pass, e.g. `{ path: './pets.db' }`. What was given is told
 * by its kind only ({@link kindOf}): it may be a URL with a password.
 */
export function optionsObject<T>(owner: string, name: string, value: T, example: string): T & object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${owner}: ${name} must be an object such as ${example}, got ${kindOf(value)}`)
  }
  return value
}

/** `value` if it is a string of at least one character, or undefined; else a `TypeError` naming the option. */
export function optionalString(owner: string, name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value === '')) {
    throw new TypeError(`${owner}: ${name} must be a non-empty string, got ${shown(value)}`)
  }
  return value
}

/** `value` if it is `true`, `false` or undefined, else a `TypeError` naming the option (`'false'` would mean on). */
export function optionalBoolean(owner: string, name: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`${owner}: ${name} must be true or false, got ${shown(value)}`)
  }
  return value
}
