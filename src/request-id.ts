/**
 * Request ids: every answer carries `X-Request-Id`, the client's own when it
 * is sane, else one made here.
 *
 * @module
 */

/** At most 128 visible ASCII characters: what a log line and a header can carry as they are. */
const SANE = /^[\x21-\x7e]{1,128}$/

/**
 * A maker of request ids: a random prefix per maker (8 base-36 characters, so
 * that workers and restarts do not collide) and a counter, e.g. `k3x9f2a1-1a`.
 * Cheaper than a UUID per request, and as unique within a prefix.
 */
export function requestIds(): (sent: string | null) => string {
  const random = new Uint32Array(2)
  crypto.getRandomValues(random)
  const prefix = `${((random[0] ?? 0) % 36 ** 4).toString(36).padStart(4, '0')}${((random[1] ?? 0) % 36 ** 4).toString(36).padStart(4, '0')}-`
  let counter = 0
  /** The id of a request whose client sent `sent` (`null`: none). */
  return (sent) => (sent !== null && SANE.test(sent) ? sent : prefix + (++counter).toString(36))
}
