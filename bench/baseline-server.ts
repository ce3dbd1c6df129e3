// Baseline for the benchmark: the Petstore API written by hand on node:http,
// answering exactly what the library answers (status, JSON body, auth,
// paging, headers; bench/parity.ts checks this on every run) with no
// framework, so the comparison shows what the library's layers cost.
// Not covered, because the benchmark never asks: /v1/openapi.json, /healthz, CORS.
//
//   tsx bench/baseline-server.ts --port 0 --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… --key KEY
//
// On PostgreSQL and MySQL the pets live in a table of the baseline's own,
// baseline_pets (bench/baseline-stores.ts), beside the library's petstore_pets.
//
// Prints one line containing http://127.0.0.1:PORT/v1 once listening.
import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import {
  isStatus,
  MemoryStore,
  MysqlStore,
  type NewPet,
  PostgresStore,
  SqliteStore,
  type Status,
  type Store,
} from './baseline-stores.js'

const BASE = '/v1'
const MAX_BODY_BYTES = 100 * 1024
const MAX_LIMIT = 100
const MAX_NAME_LENGTH = 255
const SAFE = Number.MAX_SAFE_INTEGER
const STATUS_MESSAGE = 'must be one of available, pending, sold'

interface Detail {
  path: string
  message: string
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: OutgoingHttpHeaders = {},
    readonly details?: Detail[],
  ) {
    super(message)
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const payload = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  })
  res.end(payload) // node:http drops the body itself for HEAD
}

function sendError(res: ServerResponse, error: HttpError): void {
  const body = { code: error.code, message: error.message, status: error.status, details: error.details }
  sendJson(res, error.status, body, error.headers)
}

function invalid(details: Detail[]): HttpError {
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
  return new HttpError(400, 'validation_error', message, {}, details)
}

const notFound = () => new HttpError(404, 'not_found', 'No such route')
const notAllowed = (allow: string) =>
  new HttpError(405, 'method_not_allowed', `Method not allowed; use ${allow}`, { allow })

/** Bearer key check; comparing SHA-256 digests keeps it constant-time whatever the token's length. */
function makeAuthCheck(key: string): (req: IncomingMessage) => void {
  const digest = (text: string) => createHash('sha256').update(text).digest()
  const expected = digest(key)
  const realm = 'Bearer realm="petstore"'
  const missing = new HttpError(401, 'unauthorized', 'Missing bearer API key: send Authorization: Bearer <key>', {
    'www-authenticate': realm,
  })
  const wrong = new HttpError(401, 'unauthorized', 'Invalid API key', {
    'www-authenticate': `${realm}, error="invalid_token"`,
  })
  return (req) => {
    const token = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1]
    if (token === undefined) throw missing
    if (!timingSafeEqual(digest(token), expected)) throw wrong
  }
}

/** The cursor is base64url of `p<last id of the previous page>`. */
function encodeCursor(lastId: number): string {
  return Buffer.from(`p${lastId}`).toString('base64url')
}

function decodeCursor(raw: string): number {
  // Buffer's decoder is lenient; these two checks reject what a strict one would.
  const text = /^[\w-]{1,32}$/.test(raw) && raw.length % 4 !== 1 ? Buffer.from(raw, 'base64url').toString('latin1') : ''
  const id = /^p(0|[1-9]\d{0,15})$/.test(text) ? Number(text.slice(1)) : Number.NaN
  if (!Number.isSafeInteger(id)) throw invalid([{ path: 'cursor', message: 'is not a cursor this server issued' }])
  return id
}

function parseListQuery(query: URLSearchParams): { limit: number; status?: Status; afterId: number } {
  for (const name of ['limit', 'status', 'cursor']) {
    if (query.getAll(name).length > 1) throw invalid([{ path: name, message: 'must be given at most once' }])
  }
  const details: Detail[] = []
  const rawLimit = query.get('limit') ?? '20'
  const limit = Number(rawLimit)
  if (!/^\d+$/.test(rawLimit)) details.push({ path: 'limit', message: 'must be a decimal integer' })
  else if (!(limit >= 1 && limit <= MAX_LIMIT)) details.push({ path: 'limit', message: 'must be between 1 and 100' })
  const status = query.get('status') ?? undefined
  if (status !== undefined && !isStatus(status)) details.push({ path: 'status', message: STATUS_MESSAGE })
  if (details.length > 0) throw invalid(details)
  const cursor = query.get('cursor')
  return { limit, status: status as Status | undefined, afterId: cursor === null ? 0 : decodeCursor(cursor) }
}

/** A decimal int64 (percent-decoded); undefined id when beyond the safe range, where no pet can be. */
function parsePetId(raw: string): { id: number | undefined; text: string } {
  let text = raw
  try {
    text = decodeURIComponent(raw)
  } catch {}
  if (!/^-?\d+$/.test(text)) throw invalid([{ path: 'petId', message: 'must be a decimal integer' }])
  if (text.length > 15 && (BigInt(text) < -(2n ** 63n) || BigInt(text) >= 2n ** 63n)) {
    throw invalid([{ path: 'petId', message: 'must be a 64-bit integer' }])
  }
  const id = Number(text)
  return { id: Number.isSafeInteger(id) ? id : undefined, text }
}

function parseNewPet(body: unknown): NewPet {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid([{ path: 'body', message: 'must be a JSON object' }])
  }
  const { name, categoryId, status } = body as Record<string, unknown>
  const details: Detail[] = []
  const fail = (path: string, message: string) => details.push({ path, message })
  if (name === undefined) fail('name', 'is required')
  else if (typeof name !== 'string') fail('name', 'must be a string')
  else if (name === '' || (name.length > MAX_NAME_LENGTH && [...name].length > MAX_NAME_LENGTH)) {
    fail('name', `must be 1 to ${MAX_NAME_LENGTH} characters long`)
  } else if (!/\S/.test(name)) fail('name', 'must not be only whitespace')
  if (categoryId === undefined) fail('categoryId', 'is required')
  else if (typeof categoryId !== 'number' || !Number.isInteger(categoryId)) fail('categoryId', 'must be an integer')
  else if (categoryId < -SAFE) fail('categoryId', `must be at least ${-SAFE}`)
  else if (categoryId > SAFE) fail('categoryId', `must be at most ${SAFE}`)
  if (status !== undefined && !isStatus(status)) fail('status', STATUS_MESSAGE)
  if (details.length > 0) throw invalid(details)
  return { name: name as string, categoryId: categoryId as number, status: status as Status | undefined }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? ''
  if (type !== 'application/json' && !/^application\/[!#$%&'*.^_`|~0-9a-z-]+\+json$/.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'Request body must be application/json')
  }
  const tooLarge = new HttpError(413, 'payload_too_large', `Request body is larger than ${MAX_BODY_BYTES} bytes`)
  // Reject early on a declared length, and still count bytes for chunked bodies.
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw tooLarge
    chunks.push(chunk as Buffer)
  }
  let text: string
  try {
    text = utf8.decode(Buffer.concat(chunks))
  } catch {
    throw new HttpError(400, 'invalid_json', 'Request body is not valid UTF-8')
  }
  if (text.trim() === '') {
    const message = 'body: is required (a JSON object with name and categoryId)'
    throw new HttpError(400, 'validation_error', message, {}, [{ path: 'body', message: 'is required' }])
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'invalid_json', 'Request body is not valid JSON')
  }
}

async function listPets(store: Store, query: URLSearchParams, res: ServerResponse): Promise<void> {
  const { limit, status, afterId } = parseListQuery(query)
  // One extra row tells us whether a next page exists without a COUNT query.
  const rows = await store.list({ afterId, limit: limit + 1, status })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const headers: OutgoingHttpHeaders = {}
  if (rows.length > limit && last !== undefined) {
    const statusParam = status === undefined ? '' : `&status=${status}`
    headers.link = `<${BASE}/pets?limit=${limit}${statusParam}&cursor=${encodeCursor(last.id)}>; rel="next"`
  }
  sendJson(res, 200, page, headers)
}

async function createPet(store: Store, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const pet = await store.create(parseNewPet(await readJsonBody(req)))
  sendJson(res, 201, pet, { location: `${BASE}/pets/${pet.id}` })
}

async function getPet(store: Store, rawId: string, res: ServerResponse): Promise<void> {
  const { id, text } = parsePetId(rawId)
  const pet = id === undefined ? undefined : await store.get(id)
  if (pet === undefined) throw new HttpError(404, 'not_found', `No pet with id ${text}`)
  sendJson(res, 200, pet)
}

function makeHandler(store: Store, key: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const authenticate = makeAuthCheck(key)

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const path = url.pathname
    const method = req.method ?? 'GET'
    const read = method === 'GET' || method === 'HEAD'
    // Headers of every answer, errors included, set first so writeHead merges them in.
    res.setHeader('cache-control', 'no-store')
    res.setHeader('x-content-type-options', 'nosniff')
    const petMatch = /^\/v1\/pets\/([^/]+)\/*$/.exec(path)
    if (petMatch !== null && read) {
      // getPet is deprecated: every GET/HEAD of /pets/{petId} says so.
      res.setHeader('deprecation', '@1795219200')
      res.setHeader('sunset', 'Thu, 05 Dec 2030 00:00:00 GMT')
      res.setHeader('link', `<${BASE}/pets>; rel="successor-version"`)
    }

    if (path !== BASE && !path.startsWith(`${BASE}/`)) throw notFound()
    authenticate(req)
    if (/^\/v1\/pets\/*$/.test(path)) {
      if (read) return listPets(store, url.searchParams, res)
      if (method === 'POST') return createPet(store, req, res)
      throw notAllowed('GET, HEAD, POST')
    }
    if (petMatch?.[1] !== undefined) {
      if (read) return getPet(store, petMatch[1], res)
      throw notAllowed('GET, HEAD')
    }
    throw notFound()
  }
}

async function openStore(db: string): Promise<Store> {
  if (db === 'memory') return new MemoryStore()
  if (db.startsWith('sqlite:') && db.length > 'sqlite:'.length) return new SqliteStore(db.slice('sqlite:'.length))
  if (/^postgres(ql)?:\/\//.test(db)) return PostgresStore.open(db)
  if (db.startsWith('mysql://')) return MysqlStore.open(db)
  const shown = db.replace(/\/\/[^@/]*@/, '//***@') // never echo credentials
  throw new Error(`--db must be "memory", "sqlite:PATH", "postgres://…" or "mysql://…", got "${shown}"`)
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      db: { type: 'string', default: 'memory' },
      key: { type: 'string' },
    },
  })
  if (values.key === undefined || values.key === '') throw new Error('--key is required')
  const store = await openStore(values.db)
  const handle = makeHandler(store, values.key)

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return sendError(res, error)
      console.error(error)
      sendError(res, new HttpError(500, 'internal_error', 'The server failed to answer this request'))
    })
  })

  server.listen(Number(values.port), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo
    console.log(`baseline listening on http://127.0.0.1:${port}/v1`)
  })

  process.once('SIGTERM', () => {
    server.close()
    // Keep-alive sockets from the load generator would otherwise hold close() open.
    server.closeAllConnections()
    Promise.resolve()
      .then(() => store.close())
      .finally(() => process.exit(0))
  })
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
