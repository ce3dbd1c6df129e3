/**
 * The request journal: a bounded ring of the requests a handler answered,
 * and the reads of it (filters, a count, the merge of several journals'
 * parts under `--workers`). What records into it is `withJournal`
 * (journal-handler.ts); this module holds no HTTP.
 *
 * @module
 */
import { type JournalFilter, parseJournalQuery } from './journal-query.js'

export type { FilterProblem, JournalFilter } from './journal-query.js'
export { parseJournalQuery }

/** One request the journal recorded. */
export interface JournalEntry {
  /**
   * Increasing in the order the requests were answered, unique across the workers of
   * `--workers`; not consecutive. Give the last one read as `since` to read what came after.
   */
  id: number
  /** When the request reached the handler, as an ISO 8601 text. */
  time: string
  method: string
  /** The path and query as sent. */
  path: string
  /** The operationId of the route (`createPet`), or `null` for none (a 404, a 405, a control route). */
  operation: string | null
  status: number
  /** Milliseconds from the request reaching the handler to its answer being ready. */
  durationMs: number
  /** The request's headers, names in lower case; `authorization` reads `[redacted]`. */
  headers: Record<string, string>
  /** Set when headers past 16 KiB in all were left out. */
  headersTruncated?: true
  /** Which key was sent (as `Authorization: Bearer KEY`): the first 8 hex digits of its SHA-256. */
  keyId?: string
  /** The body as text, up to the cap; `null` when the request had none. */
  body: string | null
  /** The recorded body is not all the client sent: cut at the cap, not read to its end (a 413, a 401), or not UTF-8. */
  bodyTruncated: boolean
  /** The id of the pet the answer holds (a create's, a get's). */
  petId?: number
  /** The kind of a fault injected into this request (`Prefer: fault=…`, `--faults`). */
  fault?: string
}

/** What a read answers: the entries, oldest first, and how many were dropped since the last clear. */
export interface JournalPage {
  requests: JournalEntry[]
  evicted: number
}

/** What a count answers: no entries, only their number. */
export interface JournalCount {
  count: number
  evicted: number
}

/**
 * What one journal holds for a read: the ids it keeps, the entries (or ids)
 * that match, and how many it recorded since its last clear. Parts of several
 * journals (the workers') merge into one page with {@link mergeParts}.
 */
export interface JournalPart<T extends JournalEntry | number = JournalEntry> {
  size: number
  kept: number[]
  matching: T[]
  recorded: number
}

/** The reads the journal's routes make: of one {@link Journal}, or gathered from several (`--workers`). */
export interface JournalReader {
  requests(filter?: JournalFilter): JournalPage | Promise<JournalPage>
  count(filter?: JournalFilter): JournalCount | Promise<JournalCount>
  clear(): void | Promise<void>
}

/** Options of {@link Journal}. */
export interface JournalOptions {
  /** Entries kept; past it the oldest go, counted in `evicted`. @default 1000 */
  size?: number | undefined
  /** Bytes of a body kept (UTF-8); the rest is cut and `bodyTruncated` set. @default 65536 */
  bodyBytes?: number | undefined
  /** Set by the binary: which worker this is (0 to 255), the low byte of each id. @default 0 */
  slot?: number | undefined
  /** Set by the binary: the time (ms since 1970) ids count from, the same for every worker. @default now */
  epochMs?: number | undefined
}

export const DEFAULT_JOURNAL_SIZE = 1000
export const MAX_JOURNAL_SIZE = 100_000
export const DEFAULT_BODY_BYTES = 64 * 1024
/** Ids are `microseconds since the epoch × 256 + slot`: 2^45 µs (407 days) fit below 2^53. */
const SLOTS = 256

function wholeNumber(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`Journal: ${name} must be a whole number from ${min} to ${max}, got ${String(value)}`)
  }
  return value
}

/**
 * A bounded journal of requests: the newest `size` entries, bodies cut at
 * `bodyBytes`. Record into it with `withJournal`; read it here or over HTTP
 * at `GET /__petstore/requests`. Its memory stays bounded: at most `size`
 * entries, each with at most `bodyBytes` of body and 16 KiB of headers.
 *
 * @example
 * ```ts
 * import { createPetstore, memoryStore } from 'petstore-server'
 * import { Journal, withJournal } from 'petstore-server/testing'
 *
 * const journal = new Journal({ size: 100 })
 * const handler = withJournal(createPetstore({ store: memoryStore(), keys: ['test-key'] }), journal)
 * // … the client under test calls `handler` …
 * journal.requests({ operation: 'createPet' }).requests.length // → how many creates it sent
 * ```
 */
export class Journal implements JournalReader {
  readonly size: number
  readonly bodyBytes: number
  readonly #slot: number
  readonly #epochMs: number
  /** The ring: `#entries[(#start + i) % size]`, oldest first. */
  #entries: JournalEntry[] = []
  #start = 0
  #recorded = 0
  #lastTick = -1

  constructor(options: JournalOptions = {}) {
    this.size = wholeNumber('size', options.size, 1, MAX_JOURNAL_SIZE, DEFAULT_JOURNAL_SIZE)
    this.bodyBytes = wholeNumber('bodyBytes', options.bodyBytes, 0, 16 * 1024 * 1024, DEFAULT_BODY_BYTES)
    this.#slot = wholeNumber('slot', options.slot, 0, SLOTS - 1, 0)
    this.#epochMs = options.epochMs ?? Math.floor(performance.timeOrigin + performance.now())
  }

  /** Entries dropped since the last clear: a read that needs them all must see 0. */
  get evicted(): number {
    return this.#recorded - this.#entries.length
  }

  /**
   * Adds `entry`, giving it its id, and drops the oldest past `size`. The id
   * grows with the clock, by 1 µs at least, so that ids of several workers
   * (each its own slot) interleave in the order their requests were answered.
   */
  record(entry: Omit<JournalEntry, 'id'>): JournalEntry {
    const now = Math.floor((performance.timeOrigin + performance.now() - this.#epochMs) * 1000)
    this.#lastTick = Math.max(now, this.#lastTick + 1)
    const recorded = { id: this.#lastTick * SLOTS + this.#slot, ...entry } as JournalEntry
    if (this.#entries.length < this.size) this.#entries.push(recorded)
    else {
      this.#entries[this.#start] = recorded
      this.#start = (this.#start + 1) % this.size
    }
    this.#recorded++
    return recorded
  }

  /** The entries that match `filter` (a filter object or a query string), oldest first, and `evicted`. */
  requests(filter: JournalFilter | string = {}): JournalPage {
    const parsed = filterOf(filter)
    const { kept, matching } = mergeParts([this.part(parsed)], parsed)
    return { requests: matching, evicted: this.#recorded - kept }
  }

  /** How many entries match `filter`, and `evicted`. */
  count(filter: JournalFilter | string = {}): JournalCount {
    const parsed = filterOf(filter)
    const { kept, matching } = mergeParts([this.part(parsed, true)], parsed)
    return { count: matching.length, evicted: this.#recorded - kept }
  }

  /** Forgets every entry, and `evicted` starts again at 0. */
  clear(): void {
    this.#entries = []
    this.#start = 0
    this.#recorded = 0
  }

  /** What this journal holds for a read with `filter`, `limit` aside: see {@link mergeParts}. */
  part(filter: JournalFilter, idsOnly: true): JournalPart<number>
  part(filter: JournalFilter, idsOnly?: false): JournalPart<JournalEntry>
  part(filter: JournalFilter, idsOnly = false): JournalPart<JournalEntry | number> {
    const ordered = this.#ordered()
    const matching = ordered.filter((entry) => matches(entry, filter))
    return {
      size: this.size,
      kept: ordered.map((entry) => entry.id),
      matching: idsOnly ? matching.map((entry) => entry.id) : matching,
      recorded: this.#recorded,
    }
  }

  #ordered(): JournalEntry[] {
    return this.#start === 0
      ? this.#entries
      : [...this.#entries.slice(this.#start), ...this.#entries.slice(0, this.#start)]
  }
}

function filterOf(filter: JournalFilter | string): JournalFilter {
  if (typeof filter !== 'string') return filter
  const parsed = parseJournalQuery(filter)
  if ('problem' in parsed) throw new TypeError(`Journal: ${parsed.problem.path}: ${parsed.problem.message}`)
  return parsed.filter
}

/** Whether `entry` passes every part of `filter` but `limit`. */
function matches(entry: JournalEntry, filter: JournalFilter): boolean {
  if (filter.since !== undefined && entry.id <= filter.since) return false
  if (filter.operation !== undefined && entry.operation !== filter.operation) return false
  if (filter.method !== undefined && entry.method !== filter.method) return false
  if (filter.status !== undefined) {
    const { status } = filter
    if (typeof status === 'number' ? entry.status !== status : Math.floor(entry.status / 100) !== status.class)
      return false
  }
  if (filter.path !== undefined && !entry.path.startsWith(filter.path)) return false
  for (const { name, value } of filter.headers ?? []) {
    const sent = entry.headers[name]
    if (sent === undefined || (value !== undefined && sent !== value)) return false
  }
  return true
}

const idOf = (item: JournalEntry | number) => (typeof item === 'number' ? item : item.id)

/**
 * The parts of several journals as one: of all the entries they keep, the
 * newest `size` (the largest of their sizes) stay, as one journal of that size
 * would keep them; then the matching ones, oldest first, up to `limit`. `kept`
 * is how many stayed: the recorded sum less it is what was evicted.
 */
export function mergeParts<T extends JournalEntry | number>(
  parts: readonly JournalPart<T>[],
  filter: JournalFilter,
): { matching: T[]; kept: number; recorded: number } {
  const size = Math.max(0, ...parts.map((part) => part.size))
  const kept = parts.flatMap((part) => part.kept).sort((a, b) => a - b)
  const oldest = kept.length > size ? (kept[kept.length - size] as number) : Number.NEGATIVE_INFINITY
  const matching = parts
    .flatMap((part) => part.matching)
    .filter((item) => idOf(item) >= oldest)
    .sort((a, b) => idOf(a) - idOf(b))
  return {
    matching: filter.limit === undefined ? matching : matching.slice(0, filter.limit),
    kept: Math.min(size, kept.length),
    recorded: parts.reduce((sum, part) => sum + part.recorded, 0),
  }
}
