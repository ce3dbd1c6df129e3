// What the benchmark sends: the seed data and one request shape per scenario.
// Every request goes to the server's own base URL, which is always 127.0.0.1.

export const SEED_COUNT = 1_000
const SEED_STATUSES = ['available', 'pending', 'sold', undefined] as const

export const SCENARIO_NAMES = [
  'list',
  'filtered',
  'get',
  'create',
  'unauthorized',
  'missing',
  'invalid',
  'noroute',
] as const
export type ScenarioName = (typeof SCENARIO_NAMES)[number]
/**
 * What `npm run bench` measures unless `--scenarios` says otherwise: issue #11's five. The
 * error answers (`missing` and `noroute`, 404s; `invalid`, a 400) are asked for by name, so
 * that a full run keeps its length.
 */
export const DEFAULT_SCENARIOS: readonly ScenarioName[] = ['list', 'filtered', 'get', 'create', 'unauthorized']

export interface RequestSpec {
  method: 'GET' | 'POST'
  /** Relative to the base URL (…/v1). */
  path: string
  headers: Record<string, string>
  body?: string
}

export interface Scenario {
  request: RequestSpec
  /** The status every answer must have (2xx but for `unauthorized`, `missing`, `noroute` and `invalid`). */
  status: number
  /** Describes how a response differs from what a correct server returns, if it does. */
  check(body: unknown): string | undefined
}

export interface SeedResult {
  /** An id that exists, for the `get` scenario. */
  existingId: number
}

function authHeaders(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` }
}

function jsonHeaders(key: string): Record<string, string> {
  return { ...authHeaders(key), 'content-type': 'application/json' }
}

/** Creates SEED_COUNT pets one request at a time, so ids follow the same order on every server. */
export async function seed(baseUrl: string, key: string): Promise<SeedResult> {
  const ids: number[] = []
  for (let i = 0; i < SEED_COUNT; i++) {
    const status = SEED_STATUSES[i % SEED_STATUSES.length]
    const pet = { name: `pet-${i}`, categoryId: (i % 10) + 1, ...(status === undefined ? {} : { status }) }
    const response = await fetch(`${baseUrl}/pets`, {
      method: 'POST',
      headers: jsonHeaders(key),
      body: JSON.stringify(pet),
    })
    const body: unknown = await response.json()
    const id = (body as { id?: unknown } | null)?.id
    if (response.status !== 201 || typeof id !== 'number') {
      throw new Error(`seeding ${baseUrl}: expected 201 with an id, got ${response.status} ${JSON.stringify(body)}`)
    }
    ids.push(id)
  }
  const existingId = ids[Math.floor(ids.length / 2)]
  if (existingId === undefined) throw new Error('seeding created no pets')
  return { existingId }
}

function arrayOf(length: number, body: unknown, each?: (item: Record<string, unknown>) => boolean): string | undefined {
  if (!Array.isArray(body)) return 'expected a JSON array'
  if (body.length !== length) return `expected ${length} pets, got ${body.length}`
  if (each !== undefined && !body.every((item) => each(item as Record<string, unknown>)))
    return 'unexpected pet in page'
  return undefined
}

/** An id no seeded pet has, and no create during a run reaches. */
const MISSING_ID = 9_007_199_254_740_991

const errorCode = (body: unknown, code: string): string | undefined =>
  (body as { code?: unknown } | null)?.code === code ? undefined : `expected a ${code} Error`

export function buildScenarios(key: string, seeded: SeedResult): Record<ScenarioName, Scenario> {
  return {
    list: {
      request: { method: 'GET', path: '/pets?limit=20', headers: authHeaders(key) },
      status: 200,
      check: (body) => arrayOf(20, body),
    },
    filtered: {
      request: { method: 'GET', path: '/pets?status=sold&limit=100', headers: authHeaders(key) },
      status: 200,
      check: (body) => arrayOf(100, body, (pet) => pet.status === 'sold'),
    },
    get: {
      request: { method: 'GET', path: `/pets/${seeded.existingId}`, headers: authHeaders(key) },
      status: 200,
      check: (body) => ((body as { id?: unknown } | null)?.id === seeded.existingId ? undefined : 'wrong pet'),
    },
    create: {
      request: {
        method: 'POST',
        path: '/pets',
        headers: jsonHeaders(key),
        body: JSON.stringify({ name: 'bench-pet', categoryId: 7, status: 'available' }),
      },
      status: 201,
      check: (body) => (typeof (body as { id?: unknown } | null)?.id === 'number' ? undefined : 'no id in created pet'),
    },
    // What a server costs when it turns a request away: the key check and an Error body.
    unauthorized: {
      request: { method: 'GET', path: '/pets?limit=20', headers: authHeaders(`${key}-wrong`) },
      status: 401,
      check: (body) =>
        (body as { code?: unknown } | null)?.code === 'unauthorized' ? undefined : 'expected an unauthorized Error',
    },
    // A client asking for a pet that is not there (deleted, mistyped, or a scan over ids): a 404.
    missing: {
      request: { method: 'GET', path: `/pets/${MISSING_ID}`, headers: authHeaders(key) },
      status: 404,
      check: (body) => errorCode(body, 'not_found'),
    },
    // A path the API does not have, as a scan probes them: a 404.
    noroute: {
      request: { method: 'GET', path: '/nowhere', headers: authHeaders(key) },
      status: 404,
      check: (body) => errorCode(body, 'not_found'),
    },
    // A create the validation refuses, with the field named in `details`: a 400.
    invalid: {
      request: {
        method: 'POST',
        path: '/pets',
        headers: jsonHeaders(key),
        body: JSON.stringify({ name: '', categoryId: 7, status: 'available' }),
      },
      status: 400,
      check: (body) => errorCode(body, 'validation_error'),
    },
  }
}

/**
 * Sends the scenario's request once and reports anything off about the reply:
 * a fast server that returns the wrong thing would make the numbers meaningless.
 */
export async function probe(baseUrl: string, scenario: Scenario): Promise<string | undefined> {
  const { method, path, headers, body } = scenario.request
  let response: Response
  let text: string
  try {
    response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    text = await response.text()
  } catch (error) {
    return `request failed: ${(error as Error).message}`
  }
  if (response.status !== scenario.status) {
    return `status ${response.status} (expected ${scenario.status}): ${text.slice(0, 200)}`
  }
  try {
    return scenario.check(JSON.parse(text))
  } catch {
    return 'response is not JSON'
  }
}
