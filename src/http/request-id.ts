/**
 * Request ids: every answer carries `X-Request-Id`, the client's own when it
 * is sane, else one made here.
 *
 * @module
 */

/** At most 128 visible ASCII characters: what a log line and a header can carry as they are. */
const SANE = /^[\x21-\x7e]{1,128}$/

/** 8 random base-36 characters and a dash, drawn on first use, one for the whole program */
let prefix: string | undefined
let counter = 0

function randomPrefix(): string {
  const random = new Uint32Array(2)
  crypto.getRandomValues(random)
  const part = (n = 0) => (n % 36 ** 4).toString(36).padStart(4, '0')
  return `${part(random[0])}${part(random[1])}-`
}

/**
 * The id of a request whose client sent `sent` (`null`: none): `sent` when
 * sane, else a random per-process prefix and a counter, e.g. `k3x9f2a1-1a`.
 * Cheaper than a UUID per request; the prefix keeps workers and restarts apart,
 * and every engine of the process (a key rotation makes a new one) counts on.
 */
export function requestId(sent: string | null): string {
  if (sent !== null && SANE.test(sent)) return sent
  prefix ??= randomPrefix()
  const id = prefix + (++counter).toString(36)
  // From 13 characters on (the 46,656th id) a join is a rope, which Node would flatten at each
  // header check; reading a character flattens it here, once (bench/README.md).
  id.charCodeAt(0)
  return id
}
