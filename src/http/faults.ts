/**
 * Injected faults and latency: the API's routes wrapped so that a request
 * can be answered 503, 429 or 500, dropped, or delayed, by a seeded draw
 * (replayable) or by its own `Prefer` header. Only a handler asked to pays:
 * without it the routes are the plain ones.
 *
 * @module
 */
import { PetstoreError } from '../shared/petstore-error.js'
import { seededRandom } from '../util/prng.js'
import { ErrorAnswer, errorAnswer } from './errors.js'
import type { ApiAnswer } from './exchange.js'
import { FAULT_KINDS, type FaultKind, MAX_DELAY_MS, testPreferences } from './prefer.js'
import type { Route, RouteHandler } from './route-table.js'

export { FAULT_KINDS, type FaultKind, MAX_DELAY_MS } from './prefer.js'

/** Options of `withFaults` (and the binary's `--faults`, `--latency`, `--fault-seed`, `--test-control`). */
export interface FaultOptions {
  /** The share of requests, 0 to 1, that get each kind; together at most 1. @default {} */
  faults?: Partial<Record<FaultKind, number>> | undefined
  /** Milliseconds each request waits before it is answered: a number, or `[min, max]` drawn evenly. @default 0 */
  latency?: number | readonly [number, number] | undefined
  /** The seed of the draws: the same seed and the same order of requests give the same faults. @default 0 */
  seed?: number | undefined
  /** Honour `Prefer: fault=KIND` and `Prefer: delay=MS` on a request. @default false */
  prefer?: boolean | undefined
}

/** Status, code and message of each kind's answer: those the API gives for the real thing. */
const ANSWERS: Record<FaultKind, readonly [number, string, string]> = {
  unavailable: [503, 'unavailable', 'The pet store is temporarily unavailable; try again later'],
  'after-commit': [503, 'unavailable', 'The pet store is temporarily unavailable; try again later'],
  'rate-limited': [429, 'rate_limited', 'Too many requests; try again after Retry-After seconds'],
  internal: [500, 'internal_error', 'The server failed to answer this request'],
  reset: [503, 'unavailable', 'The connection was dropped'],
}

/**
 * The answer of an injected fault: a spec-shaped Error body with `Petstore-Fault: KIND`. A
 * `reset` asks its carrier to drop the connection instead (the Node adapter does).
 */
export function faultAnswer(kind: FaultKind): ApiAnswer {
  const [status, code, message] = ANSWERS[kind]
  const headers: Record<string, string> = { 'petstore-fault': kind }
  if (kind === 'rate-limited') headers['retry-after'] = '1'
  const answer = errorAnswer(new PetstoreError(status, code, message, { headers }))
  answer.fault = kind
  if (kind === 'reset') answer.drop = true
  return answer
}

const problem = (message: string) => new TypeError(`withFaults: ${message}`)

function checkedDelay(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) {
    throw problem(`${name} must be whole milliseconds from 0 to ${MAX_DELAY_MS}, got ${String(value)}`)
  }
  return value
}

/** The rates as cumulative bounds, checked. */
function boundsOf(faults: FaultOptions['faults']): Array<readonly [number, FaultKind]> {
  const bounds: Array<readonly [number, FaultKind]> = []
  let total = 0
  for (const [kind, rate] of Object.entries(faults ?? {})) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw problem(`faults has no kind "${kind}"; the kinds are ${FAULT_KINDS.join(', ')}`)
    }
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) {
      throw problem(`faults.${kind} must be a rate from 0 to 1, got ${String(rate)}`)
    }
    total += rate
    if (rate > 0) bounds.push([total, kind as FaultKind])
  }
  if (total > 1 + 1e-9) throw problem(`the fault rates add up to ${total}, more than 1`)
  return bounds
}

/** What a request gets: a fault kind or none, and a delay. Each stream takes one draw per request, in order. */
function drawsOf(options: FaultOptions): (() => { kind: FaultKind | undefined; delay: number }) | undefined {
  const bounds = boundsOf(options.faults)
  const { latency } = options
  const [min, max] =
    latency === undefined
      ? [0, 0]
      : typeof latency === 'number'
        ? [checkedDelay(latency, 'latency'), latency]
        : [checkedDelay(latency[0], 'latency[0]'), checkedDelay(latency[1], 'latency[1]')]
  if (max < min) throw problem(`latency's max (${max}) is below its min (${min})`)
  if (bounds.length === 0 && max === 0) return undefined
  const seed = options.seed ?? 0
  if (!Number.isSafeInteger(seed)) throw problem(`seed must be an integer, got ${String(seed)}`)
  // Two streams, so that adding --latency to a run does not change which requests fail.
  const faultDraw = seededRandom(seed)
  const delayDraw = seededRandom(seed ^ 0x5bd1e995)
  return () => {
    const drawn = faultDraw()
    const hit = bounds.find(([bound]) => drawn < bound)
    const delay = max === min ? min : min + Math.floor(delayDraw() * (max - min + 1))
    return { kind: hit?.[1], delay }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The request, delayed, faulted or both. */
async function faulted(
  kind: FaultKind | undefined,
  delay: number,
  run: () => ApiAnswer | Promise<ApiAnswer>,
): Promise<ApiAnswer> {
  if (delay > 0) await sleep(delay)
  if (kind === undefined) return run()
  if (kind !== 'after-commit') return faultAnswer(kind)
  // Carried out first: a pet is created, and only its answer is lost. A refusal (a 400) stays one.
  const answer = await run()
  return answer.status >= 400 ? answer : faultAnswer(kind)
}

/**
 * What wraps each route of a handler for `options`: the API's own routes (under `basePath`, not
 * open) get the faults; the document, the reference page and the rest are left as they are.
 * `undefined` when the options ask for nothing: the routes stay as they are.
 */
export function faultyRoutes(options: FaultOptions, basePath: string): ((route: Route) => Route) | undefined {
  if (typeof options !== 'object' || options === null) throw problem('options must be an object')
  const draw = drawsOf(options)
  const prefer = options.prefer === true
  if (draw === undefined && !prefer) return undefined
  const wrap =
    (handler: RouteHandler): RouteHandler =>
    (request, param) => {
      const drawn = draw?.()
      let kind = drawn?.kind
      let delay = drawn?.delay ?? 0
      const header = prefer ? request.header('prefer') : null
      if (header !== null) {
        const asked = testPreferences(header)
        if (asked instanceof ErrorAnswer) return asked
        kind = asked.fault ?? kind
        delay = asked.delay ?? delay
      }
      if (kind === undefined && delay === 0) return handler(request, param)
      return faulted(kind, delay, () => handler(request, param))
    }
  return (route) => {
    if (route.open || !(route.path === basePath || route.path.startsWith(`${basePath}/`))) return route
    return { ...route, handler: wrap(route.handler) }
  }
}
