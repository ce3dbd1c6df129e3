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

/** The headers of every answer of `GET /pets/{petId}`. */
export function setDeprecation(headers: Record<string, string>, basePath: string): void {
  headers.deprecation = `@${DEPRECATED_AT}`
  headers.sunset = SUNSET
  appendHeader(headers, 'link', `<${basePath}/pets>; rel="successor-version"`)
}

/** Every response: pet data must not be cached or sniffed into another type. */
export function setDefaults(headers: Record<string, string>): void {
  headers['cache-control'] = 'no-store'
  headers['x-content-type-options'] = 'nosniff'
}
