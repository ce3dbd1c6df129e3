// Checks, before measuring, that both servers hold the same data and answer
// the same requests the same way (status, JSON body, the headers the API
// defines). Without this a ratio could compare a server that skips work with
// one that does it.
import { isDeepStrictEqual } from 'node:util'

const COMPARED_HEADERS = [
  'content-type',
  'link',
  'location',
  'www-authenticate',
  'allow',
  'deprecation',
  'sunset',
  'cache-control',
  'x-content-type-options',
]
const MAX_PAGES = 1_000

interface Probe {
  method: string
  /** From the server's origin, so routes outside /v1 can be asked too. */
  path: string
  auth?: string
  contentType?: string
  body?: string
}

interface Answer {
  status: number
  headers: Record<string, string | null>
  body: unknown
}

interface PetLike {
  status?: string
}

async function ask(baseUrl: string, probe: Probe): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (probe.auth !== undefined) headers.authorization = probe.auth
  if (probe.contentType !== undefined) headers['content-type'] = probe.contentType
  const response = await fetch(new URL(probe.path, baseUrl), { method: probe.method, headers, body: probe.body })
  const text = await response.text()
  let body: unknown = text
  try {
    body = text === '' ? '' : JSON.parse(text)
  } catch {}
  return {
    status: response.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)])),
    body,
  }
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

/** The same pets on both sides, in the same order with the same ids; throws otherwise. */
export async function compareData(oursUrl: string, baselineUrl: string, key: string): Promise<string> {
  const [ours, baseline] = await Promise.all([allPets(oursUrl, key), allPets(baselineUrl, key)])
  if (!isDeepStrictEqual(ours, baseline)) {
    throw new Error(`seeded data differs: ours has ${describePets(ours)}; baseline has ${describePets(baseline)}`)
  }
  return describePets(ours)
}

function probes(key: string, existingId: number): Probe[] {
  const auth = `Bearer ${key}`
  const json = 'application/json'
  return [
    { method: 'GET', path: '/v1/pets?limit=20', auth },
    { method: 'GET', path: '/v1/pets?status=sold&limit=100', auth },
    { method: 'GET', path: '/v1/pets?status=pending&limit=7&cursor=cDEw', auth },
    { method: 'HEAD', path: '/v1/pets?limit=5', auth: `bearer  ${key}` },
    { method: 'GET', path: `/v1/pets/${existingId}`, auth },
    { method: 'GET', path: '/v1/pets/999999999', auth },
    { method: 'GET', path: '/v1/pets/abc', auth },
    { method: 'GET', path: '/v1/pets/99999999999999999999', auth },
    { method: 'GET', path: '/v1/pets?limit=0&status=lost', auth },
    { method: 'GET', path: '/v1/pets?limit=1&limit=2', auth },
    { method: 'GET', path: '/v1/pets?cursor=nope', auth },
    { method: 'GET', path: '/v1/pets' },
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
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '{"name":' },
    { method: 'POST', path: '/v1/pets', auth, contentType: json, body: '' },
    { method: 'POST', path: '/v1/pets', auth, contentType: 'text/plain', body: '{}' },
    { method: 'DELETE', path: '/v1/pets', auth },
    { method: 'PUT', path: `/v1/pets/${existingId}`, auth },
    { method: 'GET', path: '/v1/nothing', auth },
    { method: 'GET', path: '/elsewhere' },
  ]
}

/** Sends each probe to both servers, in turn; returns one line per difference. */
export async function compareAnswers(
  oursUrl: string,
  baselineUrl: string,
  key: string,
  existingId: number,
): Promise<string[]> {
  const differences: string[] = []
  for (const [index, probe] of probes(key, existingId).entries()) {
    const ours = await ask(oursUrl, probe)
    const baseline = await ask(baselineUrl, probe)
    const where = `probe ${index + 1} (${probe.method} ${probe.path})`
    if (ours.status !== baseline.status) differences.push(`${where}: status ${ours.status} vs ${baseline.status}`)
    for (const name of COMPARED_HEADERS) {
      const [a, b] = [ours.headers[name], baseline.headers[name]]
      if (a !== b) differences.push(`${where}: ${name} ${JSON.stringify(a)} vs ${JSON.stringify(b)}`)
    }
    if (!isDeepStrictEqual(ours.body, baseline.body)) {
      const show = (body: unknown) => JSON.stringify(body).slice(0, 160)
      differences.push(`${where}: body ${show(ours.body)} vs ${show(baseline.body)}`)
    }
  }
  return differences
}
