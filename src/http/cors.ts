/**
 * CORS for browsers calling the API from another origin: the preflight's
 * answer, and the headers (with `Vary: Origin`) the finish step adds.
 *
 * @module
 */

import { knownOptions, shown } from '../util/option-checks.js'
import { type ApiAnswer, type ApiRequest, appendHeader } from './exchange.js'

/** Which origins may call the API from a browser. */
export interface CorsOptions {
  /**
   * `'*'`, one origin (`'https://app.example'`, as browsers send it in `Origin`: scheme, host,
   * and a port only when not the default), a list, or a predicate, whose answer counts only when
   * it is `true` (a promise, or any other value, refuses the origin).
   */
  origin: string | readonly string[] | ((origin: string) => boolean)
}

/**
 * Why `text` is not an origin as browsers send it in `Origin` (what it is compared with), or
 * `undefined` when it is one: any other text would match no browser, silently.
 */
export function originProblem(text: string): string | undefined {
  // What sandboxed frames, `file:` pages and redirects send: trusting it trusts any of them.
  if (text === 'null') return 'must not be "null", the origin of sandboxed frames and local files: any page can send it'
  const origin = URL.canParse(text) ? new URL(text).origin : 'null'
  if (origin === text) return undefined
  const hint = origin !== 'null' ? `; did you mean ${origin}?` : ''
  return `must be an origin as browsers send it, scheme://host[:port], got ${JSON.stringify(text)}${hint}`
}

/** Checks the `cors` option of `createPetstore`, whose mistakes would otherwise be 500s or silent. */
function checkCors(options: CorsOptions): void {
  const owner = 'createPetstore: cors'
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `${owner} must be { origin: '*' | origin | origin[] | (origin) => boolean }, got ${shown(options)}`,
    )
  }
  knownOptions(owner, options, ['origin'])
  const { origin } = options
  if (typeof origin === 'function' || origin === '*') return
  const origins = typeof origin === 'string' ? [origin] : origin
  if (!Array.isArray(origins) || origins.length === 0) {
    throw new TypeError(
      `${owner}.origin must be '*', an origin, a non-empty list of origins or a function, got ${shown(origin)}`,
    )
  }
  for (const each of origins) {
    if (each === '*') throw new TypeError(`${owner}.origin: '*' stands alone, not in a list`)
    const problem = typeof each === 'string' ? originProblem(each) : `must be a string, got ${shown(each)}`
    if (problem) throw new TypeError(`${owner}.origin ${problem}`)
  }
}

const EXPOSE = 'Link, Location, Deprecation, Sunset, WWW-Authenticate, X-Request-Id'

/** Headers and preflight answers for one `cors` option. */
export function createCors(options: CorsOptions) {
  checkCors(options)
  const { origin } = options
  const allows = (requestOrigin: string): boolean =>
    typeof origin === 'function'
      ? origin(requestOrigin) === true
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

  /** The answer to a preflight `OPTIONS`, given before authentication; `methods` is what the routes answer. */
  function preflight(methods: string): ApiAnswer {
    return {
      status: 204,
      headers: {
        'access-control-allow-methods': methods,
        // X-Request-Id: a browser may send its own, which the API keeps.
        'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id',
        'access-control-max-age': '600',
      },
      body: null,
    }
  }

  return { decorate, preflight }
}

/** The CORS of one handler: see {@link createCors}. */
export type Cors = ReturnType<typeof createCors>
