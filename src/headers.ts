/**
 * Headers the API sets beyond content: deprecation of getPet, and the
 * defaults every response carries.
 *
 * @module
 */

/** When getPet was deprecated (the 1.0.0 release): RFC 9745 wants `@<unix seconds>`. */
export const DEPRECATED_AT = Date.UTC(2026, 10, 21) / 1000
/** When getPet is removed, as the spec says: 5 December 2030. */
export const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'

/** The headers of every answer of `GET /pets/{petId}`. */
export function setDeprecation(headers: Headers, basePath: string): void {
  headers.set('deprecation', `@${DEPRECATED_AT}`)
  headers.set('sunset', SUNSET)
  headers.append('link', `<${basePath}/pets>; rel="successor-version"`)
}

/** Every response: pet data must not be cached or sniffed into another type. */
export function setDefaults(headers: Headers): void {
  headers.set('cache-control', 'no-store')
  headers.set('x-content-type-options', 'nosniff')
}
