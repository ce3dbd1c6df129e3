/**
 * The journal's filters, read from a query string (`?operation=createPet&status=4xx`)
 * and checked: a filter that cannot match, by a typo, must be a 400, not an
 * empty page that a test takes for "the client sent nothing".
 *
 * @module
 */
import { OPERATIONS } from '../api/routes.js'

/** Which entries a read of the journal takes; every part given must match. */
export interface JournalFilter {
  /** The operationId: `listPets`, `createPet` or `getPet`. */
  operation?: string | undefined
  /** The method, in upper case. */
  method?: string | undefined
  /** A status (`422`), or a class (`{ class: 4 }`, written `4xx` in a query). */
  status?: number | { class: number } | undefined
  /** A prefix of the path (query included), starting with `/`. */
  path?: string | undefined
  /** Only entries after this id. */
  since?: number | undefined
  /** At most this many entries, the oldest first. */
  limit?: number | undefined
  /** Headers the request carried: by name (lower case), and with `value`, that exact value. */
  headers?: readonly { name: string; value?: string | undefined }[] | undefined
}

/** What is wrong with a query, as an Error body's detail names it. */
export interface FilterProblem {
  path: string
  message: string
}

const NAMES = ['operation', 'method', 'status', 'path', 'since', 'limit', 'header'] as const
const KNOWN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** The most `limit` may ask: more than any journal keeps. */
const MAX_LIMIT = 100_000

/** One parameter's value read, or what is wrong with it. */
type Reader = (value: string, filter: JournalFilter) => string | undefined

const READERS: Record<(typeof NAMES)[number], Reader> = {
  operation(value, filter) {
    if (!(OPERATIONS as readonly string[]).includes(value)) return `must be one of ${OPERATIONS.join(', ')}`
    filter.operation = value
  },
  method(value, filter) {
    const method = value.toUpperCase()
    if (!KNOWN_METHODS.includes(method)) return `must be an HTTP method (${KNOWN_METHODS.join(', ')})`
    filter.method = method
  },
  status(value, filter) {
    if (/^[1-5][0-9][0-9]$/.test(value)) filter.status = Number(value)
    else if (/^[1-5]xx$/i.test(value)) filter.status = { class: Number(value[0]) }
    else return 'must be a status (422) or a class of them (4xx)'
  },
  path(value, filter) {
    if (!value.startsWith('/')) return 'must be a path prefix starting with /'
    filter.path = value
  },
  since(value, filter) {
    const since = /^[0-9]{1,16}$/.test(value) ? Number(value) : Number.NaN
    if (!Number.isSafeInteger(since)) return 'must be the id of an entry, a whole number'
    filter.since = since
  },
  limit(value, filter) {
    const limit = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN
    if (!(limit >= 1 && limit <= MAX_LIMIT)) return `must be a whole number from 1 to ${MAX_LIMIT}`
    filter.limit = limit
  },
  header(value, filter) {
    const colon = value.indexOf(':')
    const name = (colon < 0 ? value : value.slice(0, colon)).trim().toLowerCase()
    if (!TOKEN.test(name)) return 'must be a header name, or NAME:VALUE for its exact value'
    filter.headers = [...(filter.headers ?? []), { name, value: colon < 0 ? undefined : value.slice(colon + 1).trim() }]
  },
}

/**
 * The filter a query string asks for, or the problem with it: an unknown
 * parameter, one given twice (but `header`, which may repeat), or a value
 * that is not one the parameter takes.
 *
 * @example
 * ```ts
 * parseJournalQuery('operation=createPet&status=4xx&header=idempotency-key')
 * // → { filter: { operation: 'createPet', status: { class: 4 }, headers: [{ name: 'idempotency-key', value: undefined }] } }
 * parseJournalQuery('status=abc') // → { problem: { path: 'status', message: 'must be a status (422) or …' } }
 * ```
 */
export function parseJournalQuery(query: string): { filter: JournalFilter } | { problem: FilterProblem } {
  const filter: JournalFilter = {}
  const seen = new Set<string>()
  for (const [name, value] of new URLSearchParams(query)) {
    const read = READERS[name as (typeof NAMES)[number]]
    if (read === undefined || !Object.hasOwn(READERS, name)) {
      return { problem: { path: name, message: `is not a filter; use ${NAMES.join(', ')}` } }
    }
    if (seen.has(name) && name !== 'header') return { problem: { path: name, message: 'must be given at most once' } }
    seen.add(name)
    const message = read(value, filter)
    if (message !== undefined) return { problem: { path: name, message: `${message}, got ${JSON.stringify(value)}` } }
  }
  return { filter }
}
