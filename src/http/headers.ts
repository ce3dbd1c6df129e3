/**
 * Headers the API sets beyond content: deprecation of getPet, and the
 * defaults every response carries.
 *
 * @module
 */
import { appendHeader } from './exchange.js'

/** When getPet was deprecated (the 1.0.0 release): RFC 9745 wants `@<unix seconds>`. */
export const DEPRECATED_AT = Date.UTC(2026, 10, 21) / 1000
/** When getPet is removed, as the spec says: 5 December 2030. */
export const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'

/** `Deprecation`'s value, written once rather than turned into text for every answer. */
const DEPRECATION = `@${DEPRECATED_AT}`

/**
 * Sets the headers of every answer of `GET /pets/{petId}` under `basePath`.
 * The values are made once: a `Link` joined per answer is a string Node
 * flattens at each header check; made once, it is flattened once (bench/README.md).
 */
export function deprecationHeaders(basePath: string): (headers: Record<string, string>) => void {
  const successor = `<${basePath}/pets>; rel="successor-version"`
  return (headers) => {
    headers.deprecation = DEPRECATION
    headers.sunset = SUNSET
    appendHeader(headers, 'link', successor)
  }
}

/** Every response: pet data must not be cached or sniffed into another type. */
export function setDefaults(headers: Record<string, string>): void {
  // A route may allow caching of its own (the reference page's files).
  headers['cache-control'] ??= 'no-store'
  headers['x-content-type-options'] = 'nosniff'
}
