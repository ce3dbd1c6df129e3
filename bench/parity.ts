// Checks, before measuring, that every server holds the same data as the
// first (ours) and answers the same requests with the same bytes: status, body
// text, and every header but `date` (a generated `x-request-id` is compared by
// its shape, a client's must come back as sent). Without this a ratio could
// compare a server that skips work with one that does it.
import { isDeepStrictEqual } from 'node:util'

/** A server under comparison: its name for messages, and its base URL. */
export interface Named {
  name: string
  baseUrl: string
  /**
   * The body's framing (content-length, or transfer-encoding: chunked) is the host's, not the
   * API's: an embedding such as @whatwg-node/server streams what our handler answered. Not compared.
   */
  hostFraming?: boolean
}

const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding'])

/** Differ from one answer to the next on every server: left out of the comparison. */
const IGNORED_HEADERS = new Set(['date'])
/** What a generated `x-request-id` looks like (src/http/request-id.ts): a random prefix, a dash, a counter. */
const GENERATED_ID = /^[0-9a-z]{8}-[0-9a-z]+$/
const MAX_PAGES = 1_000

interface Probe {
  method: string
  /** Sent as `x-request-id`: the answer must echo it (a generated one is compared by its shape only). */
  requestId?: string
  /** From the server's origin, so routes outside /v1 can be asked too. */
  path: string
  auth?: string
  contentType?: string
  body?: string
}

interface Answer {
  status: number
  /** Every header but `date`, names in lower case; a generated `x-request-id` as `(generated)`. */
  headers: Record<string, string>
  /** The body's text, byte for byte. */
  text: string
  body: unknown
}

interface PetLike {
  status?: string
}

async function ask(baseUrl: string, probe: Probe): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (probe.auth !== undefined) headers.authorization = probe.auth
  if (probe.contentType !== undefined) headers['content-type'] = probe.contentType
  if (probe.requestId !== undefined) headers['x-request-id'] = probe.requestId
  const response = await fetch(new URL(probe.path, baseUrl), { method: probe.method, headers, body: probe.body })
  const text = await response.text()
  let body: unknown = text
  try {
    // categoryIds as their digits: JSON.parse would make 2^63−1 and 2^63 the same number.
    body = text === '' ? '' : JSON.parse(text.replace(/"categoryId":(-?[0-9]+)(?=[,}])/g, '"categoryId":"$1"'))
  } catch {}
  const answered: Record<string, string> = {}
  for (const [name, value] of response.headers) {
    if (IGNORED_HEADERS.has(name)) continue
    // A generated id differs per server and per request: only its shape is compared. A sent one must come back as sent.
    answered[name] =
      name === 'x-request-id' && value !== probe.requestId && GENERATED_ID.test(value) ? '(generated)' : value
  }
  return { status: response.status, headers: answered, text, body }
}

/** Every pet, page by page, following Link rel="next" as a client would. */
async function allPets(baseUrl: string, key: string): Promise<PetLike[]> {
  const pets: PetLike[] = []
  let next: string | undefined = '/v1/pets?limit=100'
  for (let page = 0; next !== undefined; page++) {
    if (page >= MAX_PAGES) throw new Error(`${baseUrl}: more than ${MAX_PAGES} pages, Link never ends`)
    const { status, headers, body } = await ask(baseUrl, { method: 'GET', path: next, auth: `Bearer ${key}` })
    if (status !== 200 || !Array.isArray(body)) throw new Error(`${baseUrl}: GET ${next} answered ${status}`)
    pets.push(...body)
    next = /^<([^>]+)>; rel="next"$/.exec(headers.link ?? '')?.[1]
  }
  return pets
}

/** "1000 pets: 250 available, …", to show what was seeded. */
export function describePets(pets: readonly PetLike[]): string {
  const counts = new Map<string, number>()
  for (const pet of pets) counts.set(pet.status ?? 'no status', (counts.get(pet.status ?? 'no status') ?? 0) + 1)
  return `${pets.length} pets: ${[...counts].map(([status, count]) => `${count} ${status}`).join(', ')}`
}

/** The same pets on every server as on the first, in the same order with the same ids; throws otherwise. */
export async function compareData(servers: readonly Named[], key: string): Promise<string> {
  const [reference, ...others] = await Promise.all(servers.map((server) => allPets(server.baseUrl, key)))
  const first = servers[0]
  if (reference === undefined || first === undefined) throw new Error('no server to compare')
  for (const [index, pets] of others.entries()) {
    if (!isDeepStrictEqual(reference, pets)) {
      const other = servers[index + 1]?.name
      throw new Error(
        `seeded data differs: ${first.name} has ${describePets(reference)}; ${other} has ${describePets(pets)}`,
      )
    }
  }
  return describePets(reference)
}

function probes(key: string, existingId: number): Probe[] {
  const auth = `Bearer ${key}`
  const json = 'application/json'
  return [
    { method: 'GET', path: '/v1/pets?limit=20', auth },
    { method: 'GET', path: '/v1/pets?status=sold&limit=100', auth, requestId: 'probe-1' },
    { method: 'GET', path: '/v1/pets?status=pending&limit=7&cursor=cDEw', auth },
    { method: 'HEAD', path: '/v1/pets?limit=5', auth: `bearer  ${key}` },
    { method: 'GET', path: `/v1/pets/${existingId}`, auth },
    { method: 'GET', path: '/v1/pets/999999999', auth },
    { method: 'GET', path: '/v1/pets/abc', auth },
    { method: 'GET', path: '/v1/pets/99999999999999999999', auth },
    { method: 'GET', path: '/v1/pets?limit=0&status=lost', auth },
    { method: 'GET', path: '/v1/pets?limit=1&limit=2', auth },
    { method: 'GET', path: '/v1/pets?cursor=nope', auth },
    { method: 'GET', path: '/v1/pets?limit=&status=', auth },
    { method: 'GET', path: '/v1/pets?limit=101', auth },
    { method: 'GET', path: '/v1/pets?limit=2.5&status=sold&status=sold', auth },
    { method: 'GET', path: '/v1/pets' },
    { method: 'GET', path: '/v1/pets', requestId: 'client-id_42' },
    // Not sane (a space, too long): a generated one instead.
    { method: 'GET', path: '/v1/pets', auth, requestId: 'has space' },
    { method: 'GET', path: '/v1/pets', auth, requestId: 'x'.repeat(129) },
    // Two Authorization fields as a web Request joins them: refused, whichever a proxy read.
    { method: 'GET', path: '/v1/pets', auth: `${auth}, ${auth}` },
    { method: 'GET', path: `/v1/pets/${existingId}`, auth: 'Bearer wrong', requestId: 'probe-get' },
    { method: 'GET', path: '/v1/pets', auth: 'Bearer wrong-key' },
    { method: 'GET', path: `/v1/pets/${existingId}`, auth: 'Basic Ym9iOnNlY3JldA==' },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: '{"name":"probe","categoryId":3,"status":"sold"}',
    },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '{"name":" ","categoryId":1.5,"status":null}' },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '[]' },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: 'null' },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '{"id":5}' },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: `{"name":"${'x'.repeat(256)}","categoryId":"1"}`,
    },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '{"name":"","categoryId":1e300}' },
    // int64: the ends come back digit for digit; one past them, or a fraction JSON.parse reads as an integer, is a 400.
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: '{"name":"max","categoryId":9223372036854775807}',
    },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: '{"name":"min","categoryId":-9223372036854775808,"status":"sold"}',
    },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: '{"name":"past","categoryId":9223372036854775808}',
    },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: '{"name":"half","categoryId":9007199254740993.5}',
    },
    {
      method: 'POST',
      path: '/v1/pets/',
      auth,
      contentType: 'application/vnd.pet+json; charset=utf-8',
      body: '{"name":"plus","categoryId":-2}',
    },
    { method: 'POST', path: '/v1/pets', auth },
    {
      method: 'POST',
      path: '/v1/pets',
      auth,
      contentType: json,
      body: `{"name":"big","pad":"${'x'.repeat(102_400)}"}`,
    },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '{"name":' },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '' },
    { method: 'POST', path: '/v1/pets', auth, contentType: 'text/plain', body: '{}' },
    { method: 'DELETE', path: '/v1/pets', auth },
    { method: 'PUT', path: `/v1/pets/${existingId}`, auth },
    { method: 'GET', path: '/v1/nothing', auth },
    { method: 'GET', path: '/elsewhere' },
  ]
}

/**
 * Sends each probe to every server, in turn (so a create probe adds one pet to
 * each, and the data stays alike); returns, per server after the first, one
 * line per difference from the first's answer.
 */
export async function compareAnswers(
  servers: readonly Named[],
  key: string,
  existingId: number,
): Promise<Map<string, string[]>> {
  const [first, ...others] = servers
  const differences = new Map(others.map((server) => [server.name, [] as string[]]))
  if (first === undefined) return differences
  for (const [index, probe] of probes(key, existingId).entries()) {
    const where = `probe ${index + 1} (${probe.method} ${probe.path})`
    const expected = await ask(first.baseUrl, probe)
    for (const server of others) {
      const found = differences.get(server.name) ?? []
      const answer = await ask(server.baseUrl, probe)
      const versus = (a: unknown, b: unknown) => `${a} (${first.name}) vs ${b} (${server.name})`
      if (expected.status !== answer.status) found.push(`${where}: status ${versus(expected.status, answer.status)}`)
      for (const name of new Set([...Object.keys(expected.headers), ...Object.keys(answer.headers)])) {
        if (server.hostFraming && FRAMING_HEADERS.has(name)) continue
        const [a, b] = [expected.headers[name], answer.headers[name]]
        if (a !== b) found.push(`${where}: ${name} ${versus(JSON.stringify(a), JSON.stringify(b))}`)
      }
      if (expected.text !== answer.text) {
        const show = (text: string) => JSON.stringify(text.slice(0, 160))
        found.push(`${where}: body ${versus(show(expected.text), show(answer.text))}`)
      }
    }
  }
  return differences
}
