/**
 * The path and query of a request URL, exactly as the WHATWG URL parser
 * gives them, without running the parser where it would change nothing.
 * `new URL()` was the largest single cost of the engine on a small answer,
 * and an API request's target is almost always plain ASCII that the parser
 * leaves as it is.
 *
 * @module
 */

/** The parts of a URL the API reads. */
export interface Target {
  /** As `URL.pathname`. */
  readonly pathname: string
  /**
   * The query without its `?`, `''` when there is none; read it with
   * {@link singleValues}. Where the parser would have percent-encoded a
   * character (`"`, `<`, `>`), it may be left as it is: decoded, both are alike.
   */
  readonly query: string
}

/**
 * Path characters the URL parser copies as they are, by char code: unreserved,
 * sub-delims, `:`, `@`, `/` and `%` (it leaves percent-escapes alone). It
 * rewrites anything else: `\` becomes `/`, and spaces, quotes, `<>`,
 * backticks, braces and non-ASCII are percent-encoded. One loop over the
 * target with this table: cheaper than two regexes and four searches.
 */
const PATH_CHARS = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%") {
  PATH_CHARS[c.charCodeAt(0)] = 1
}
/** A `.` or `..` segment, also spelled with `%2e`: the parser resolves them. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$)/i

/**
 * Whether `code` is visible ASCII. The parser strips tabs, newlines and
 * spaces, and encodes the rest (a lone surrogate becomes U+FFFD), which
 * decoding would not undo.
 */
const visible = (code: number) => code >= 0x21 && code <= 0x7e

/**
 * Authorities (`http://host[:port]`) already checked by the parser, and
 * whether it took them. A server sees few: clients send the same `Host`.
 * Bounded, so a client inventing hosts cannot grow it; the last one is
 * compared in place, without even slicing it out of the URL.
 */
const authorities = new Map<string, boolean>()
const AUTHORITIES_KEPT = 256
let lastAuthority = ''

function parsesAsAuthority(url: string, end: number): boolean {
  if (end === lastAuthority.length && url.startsWith(lastAuthority)) return true
  return authorityParses(url.slice(0, end))
}

/**
 * Whether the URL parser takes `authority` (`http://host[:port]`) as it is,
 * so that a path after it is read as written: the rule {@link parseTarget}
 * applies, for a carrier that hands over an origin-form target instead.
 */
export function authorityParses(authority: string): boolean {
  let ok = authorities.get(authority)
  if (ok === undefined) {
    try {
      // Userinfo, or a `?`, `#` or `\` in the authority: the parser splits those its own way.
      ok = !/[@?#\\]/.test(authority.slice(authority.indexOf('//') + 2)) && new URL(`${authority}/`).pathname === '/'
    } catch {
      ok = false
    }
    if (authorities.size >= AUTHORITIES_KEPT) authorities.clear()
    authorities.set(authority, ok)
  }
  if (ok) lastAuthority = authority
  return ok
}

function parsed(url: string): Target {
  const { protocol, pathname, search } = new URL(url)
  // An absolute-form target of another scheme (`GET ftp://host/v1/pets`) names nothing of this server.
  if (protocol !== 'http:' && protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${protocol}`)
  return { pathname, query: search.slice(1) }
}

/**
 * The target of `url`, an absolute `http:` or `https:` URL; throws a
 * `TypeError` where `new URL(url)` would, or for a URL of another scheme. Plain URLs are split by hand, the
 * rest are left to the parser, so the result is always what it would say.
 *
 * @example
 * ```ts
 * parseTarget('http://x/v1/pets?limit=2') // → { pathname: '/v1/pets', query: 'limit=2' }
 * parseTarget('http://x/v1/a b') // → { pathname: '/v1/a%20b', query: '' } (by the parser)
 * ```
 */
export function parseTarget(url: string): Target {
  const scheme = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : 0
  const slash = scheme === 0 ? -1 : url.indexOf('/', scheme)
  if (slash < 0) return parsed(url)
  return (parsesAsAuthority(url, slash) && plainTarget(url, slash)) || parsed(url)
}

/**
 * The target of a request sent in origin form (`/v1/pets?limit=2`) on an
 * authority the parser takes (see `ApiRequest.target`), split by hand; or
 * `undefined` where the parser would rewrite something, and then
 * `parseTarget` of the absolute URL says what it is.
 */
export function parseOriginTarget(target: string): Target | undefined {
  return plainTarget(target, 0)
}

/** `text` from `slash` (a path) split by hand, or `undefined` where the parser would rewrite something. */
function plainTarget(text: string, slash: number): Target | undefined {
  const { length } = text
  for (let i = 0; i < slash; i++) if (!visible(text.charCodeAt(i))) return undefined
  if (text.charCodeAt(slash) !== 47 /* / */) return undefined
  // The path runs to the first `?` or `#`.
  let end = slash + 1
  let dotOrPercent = false
  for (; end < length; end++) {
    const code = text.charCodeAt(end)
    if (code === 63 /* ? */ || code === 35 /* # */) break
    if (code > 127 || PATH_CHARS[code] === 0) return undefined
    if (code === 46 /* . */ || code === 37 /* % */) dotOrPercent = true
  }
  const path = end === length && slash === 0 ? text : text.slice(slash, end)
  if (dotOrPercent && DOT_SEGMENT.test(path)) return undefined
  if (end === length) return { pathname: path, query: '' }
  // The query runs from a `?` to the first `#`; the fragment is not sent on.
  let hash = text.charCodeAt(end) === 35 ? end : -1
  for (let i = end + 1; i < length; i++) {
    const code = text.charCodeAt(i)
    if (!visible(code)) return undefined
    if (code === 35 && hash < 0) hash = i
  }
  if (hash === end) return { pathname: path, query: '' }
  return { pathname: path, query: hash < 0 ? text.slice(end + 1) : text.slice(end + 1, hash) }
}

/**
 * The value of each of `names` in `query`, in the order of `names`, decoded
 * as `URLSearchParams` decodes them (`+` is a space, percent-escapes are
 * UTF-8), `undefined` for one not given; or, where some are given more than
 * once, the first such of `names`. One pass: a query with neither `%` nor
 * `+` decodes to itself and is split by hand. An array, not an object keyed
 * by name: writing under a variable key is slow (bench/README.md).
 *
 * @example
 * ```ts
 * singleValues('limit=2&status=sold', ['limit', 'cursor']) // → ['2', undefined]
 * singleValues('status=s%6Fld', ['status']) // → ['sold']
 * singleValues('limit=2&limit=3', ['limit']) // → 'limit'
 * ```
 */
export function singleValues<N extends string>(query: string, names: readonly N[]): (string | undefined)[] | N {
  const count = names.length
  const values: (string | undefined)[] = []
  for (let i = 0; i < count; i++) values.push(undefined)
  if (query === '') return values
  if (query.includes('%') || query.includes('+')) {
    const params = new URLSearchParams(query)
    for (let i = 0; i < count; i++) {
      const all = params.getAll(names[i] as N)
      if (all.length > 1) return names[i] as N
      values[i] = all[0]
    }
    return values
  }
  /** The lowest index of a name given more than once; `count` while none is. */
  let repeated = count
  let start = 0
  while (start <= query.length) {
    let amp = query.indexOf('&', start)
    if (amp < 0) amp = query.length
    if (amp > start) {
      const equals = query.indexOf('=', start)
      const nameEnd = equals < 0 || equals > amp ? amp : equals
      for (let i = 0; i < count; i++) {
        const name = names[i] as N
        if (nameEnd - start !== name.length || !query.startsWith(name, start)) continue
        if (values[i] !== undefined) repeated = Math.min(repeated, i)
        else values[i] = nameEnd === amp ? '' : query.slice(nameEnd + 1, amp)
        break
      }
    }
    start = amp + 1
  }
  return repeated < count ? (names[repeated] as N) : values
}
