// Baseline for the benchmark: the Petstore API written by hand on node:http,
// doing the same work as the library (auth, validation, paging, headers) with
// no framework, so the comparison shows what the library's layers cost.
//
//   tsx bench/baseline-server.ts --port 0 --db memory|sqlite:PATH --key KEY
//
// Prints one line containing http://127.0.0.1:PORT/v1 once listening.
import { timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import {
  isStatus,
  MemoryStore,
  type NewPet,
  type Pet,
  SqliteStore,
  type Status,
  type Store,
} from './baseline-stores.js'

const MAX_BODY_BYTES = 100 * 1024
const DEFAULT_LIMIT = 20
const MAX_LIMIT = 100
const MAX_NAME_LENGTH = 255

const DEPRECATION_HEADERS: OutgoingHttpHeaders = {
  deprecation: '@1795219200',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: '</v1/pets>; rel="successor-version"',
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: OutgoingHttpHeaders = {},
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
  res.end(payload)
}

function sendError(res: ServerResponse, error: HttpError): void {
  const body = { code: error.code, message: error.message, status: error.status }
  sendJson(res, error.status, body, error.headers)
}

function badRequest(message: string): HttpError {
  return new HttpError(400, 'bad_request', message)
}

function methodNotAllowed(allow: string): HttpError {
  return new HttpError(405, 'method_not_allowed', 'Method not allowed', { allow })
}

function makeAuthCheck(key: string): (req: IncomingMessage) => boolean {
  const expected = Buffer.from(`Bearer ${key}`)
  return (req) => {
    const given = Buffer.from(req.headers.authorization ?? '')
    // timingSafeEqual needs equal lengths; the length itself is not the secret.
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

function parseLimit(raw: string | null): number {
  if (raw === null) return DEFAULT_LIMIT
  const limit = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw badRequest(`limit must be an integer from 1 to ${MAX_LIMIT}`)
  return limit
}

function parseStatus(raw: string | null): Status | undefined {
  if (raw === null) return undefined
  if (!isStatus(raw)) throw badRequest('status must be one of available, pending, sold')
  return raw
}

/** The cursor is the base64url-encoded decimal id of the last pet on the previous page. */
function encodeCursor(lastId: number): string {
  return Buffer.from(String(lastId)).toString('base64url')
}

function decodeCursor(raw: string | null): number {
  if (raw === null) return 0
  const decoded = Buffer.from(raw, 'base64url').toString('utf8')
  const id = /^\d{1,15}$/.test(decoded) ? Number(decoded) : Number.NaN
  if (Number.isNaN(id)) throw badRequest('cursor is invalid')
  return id
}

function parseId(raw: string): number {
  const id = /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : Number.NaN
  if (Number.isNaN(id)) throw badRequest('id must be a positive integer')
  return id
}

function parseNewPet(body: unknown): NewPet {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object')
  const { name, categoryId, status } = body as Record<string, unknown>
  if (typeof name !== 'string' || name.length < 1 || name.length > MAX_NAME_LENGTH) {
    throw badRequest(`name must be a string of 1 to ${MAX_NAME_LENGTH} characters`)
  }
  if (typeof categoryId !== 'number' || !Number.isSafeInteger(categoryId)) {
    throw badRequest('categoryId must be an integer')
  }
  if (status !== undefined && !isStatus(status)) throw badRequest('status must be one of available, pending, sold')
  return status === undefined ? { name, categoryId } : { name, categoryId, status }
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const contentType = req.headers['content-type'] ?? ''
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json')
  }
  // Reject early on a declared length, and still count bytes for chunked bodies.
  const tooLarge = new HttpError(413, 'payload_too_large', `body exceeds ${MAX_BODY_BYTES} bytes`, {
    connection: 'close',
  })
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > MAX_BODY_BYTES) throw tooLarge
    chunks.push(buffer)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw badRequest('body is not valid JSON')
  }
}

function listPets(store: Store, query: URLSearchParams, res: ServerResponse): void {
  const limit = parseLimit(query.get('limit'))
  const status = parseStatus(query.get('status'))
  const afterId = decodeCursor(query.get('cursor'))
  // One extra row tells us whether a next page exists without a COUNT query.
  const rows = store.list(status === undefined ? { afterId, limit: limit + 1 } : { afterId, limit: limit + 1, status })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const headers: OutgoingHttpHeaders = {}
  if (rows.length > limit && last !== undefined) {
    const statusParam = status === undefined ? '' : `&status=${status}`
    headers.link = `</v1/pets?limit=${limit}${statusParam}&cursor=${encodeCursor(last.id)}>; rel="next"`
  }
  sendJson(res, 200, page, headers)
}

async function createPet(store: Store, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const pet: Pet = store.create(parseNewPet(await readJsonBody(req)))
  sendJson(res, 201, pet, { location: `/v1/pets/${pet.id}` })
}

function getPet(store: Store, rawId: string, res: ServerResponse): void {
  const pet = store.get(parseId(rawId))
  if (pet === undefined) throw new HttpError(404, 'not_found', 'Pet not found', DEPRECATION_HEADERS)
  sendJson(res, 200, pet, DEPRECATION_HEADERS)
}

function makeHandler(store: Store, key: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const isAuthorized = makeAuthCheck(key)
  const unauthorized = new HttpError(401, 'unauthorized', 'Missing or invalid bearer token', {
    'www-authenticate': 'Bearer realm="petstore"',
  })

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const method = req.method ?? 'GET'
    if (!isAuthorized(req)) throw unauthorized

    if (url.pathname === '/v1/pets') {
      if (method === 'GET') return listPets(store, url.searchParams, res)
      if (method === 'POST') return createPet(store, req, res)
      throw methodNotAllowed('GET, POST')
    }
    const match = /^\/v1\/pets\/([^/]+)$/.exec(url.pathname)
    if (match?.[1] !== undefined) {
      if (method === 'GET') return getPet(store, match[1], res)
      throw methodNotAllowed('GET')
    }
    throw new HttpError(404, 'not_found', 'Route not found')
  }
}

function openStore(db: string): Store {
  if (db === 'memory') return new MemoryStore()
  if (db.startsWith('sqlite:') && db.length > 'sqlite:'.length) return new SqliteStore(db.slice('sqlite:'.length))
  throw new Error(`--db must be "memory" or "sqlite:PATH", got "${db}"`)
}

function main(): void {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      db: { type: 'string', default: 'memory' },
      key: { type: 'string' },
    },
  })
  if (values.key === undefined || values.key === '') throw new Error('--key is required')
  const store = openStore(values.db)
  const handle = makeHandler(store, values.key)

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return sendError(res, error)
      console.error(error)
      sendError(res, new HttpError(500, 'internal_error', 'Internal server error'))
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
    store.close()
    process.exit(0)
  })
}

main()
