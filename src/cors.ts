/**
 * CORS for browsers calling the API from another origin. Written here rather
 * than taken from itty-router's `cors()`, which rebuilds every response and
 * sets no `Vary: Origin`.
 *
 * @module
 */
import { type ApiAnswer, type ApiRequest, appendHeader } from './exchange.js'

/** Which origins may call the API from a browser. */
export interface CorsOptions {
  /** `'*'`, one origin (`'https://app.example'`), a list, or a predicate. */
  origin: string | readonly string[] | ((origin: string) => boolean)
}

const EXPOSE = 'Link, Location, Deprecation, Sunset, WWW-Authenticate, X-Request-Id'

/** Headers and preflight answers for one `cors` option. */
export function createCors(options: CorsOptions) {
  const { origin } = options
  const allows = (requestOrigin: string): boolean =>
    typeof origin === 'function'
      ? origin(requestOrigin)
      : typeof origin === 'string'
        ? origin === '*' || origin === requestOrigin
        : origin.includes(requestOrigin)

  /** Adds the CORS headers a response to `request` needs (none for a foreign origin). */
  function decorate(headers: Record<string, string>, request: ApiRequest): void {
    if (origin !== '*') appendHeader(headers, 'vary', 'Origin')
    const requestOrigin = request.header('origin')
    if (requestOrigin === null || !allows(requestOrigin)) return
    headers['access-control-allow-origin'] = origin === '*' ? '*' : requestOrigin
    headers['access-control-expose-headers'] = EXPOSE
  }

  /** The answer to a preflight `OPTIONS`, given before authentication. */
  function preflight(): ApiAnswer {
    return {
      status: 204,
      headers: {
        'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
      },
      body: null,
    }
  }

  return { decorate, preflight }
}
