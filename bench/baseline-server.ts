// Baseline for the benchmark: the Petstore API written by hand on node:http,
// answering exactly what the library answers (status, JSON body, auth,
// paging, headers; bench/parity.ts checks this on every run) with no
// framework, so the comparison shows what the library's layers cost.
// Not covered, because the benchmark never asks: /v1/openapi.json, /healthz, CORS.
//
//   tsx bench/baseline-server.ts --port 0 --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… --key KEY
//
// The rules (auth, cursor, validation, error bodies) are bench/api-rules.ts,
// shared with the Fastify and Hono competitors; the pets live in baseline_pets.
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  ApiError,
  COMMON_HEADERS,
  DEPRECATION_HEADERS,
  findPet,
  hasBody,
  internalError,
  listPage,
  MAX_BODY_BYTES,
  makeAuthCheck,
  notAllowed,
  notFound,
  parseJsonBody,
  parseListQuery,
  parseNewPet,
  payloadTooLarge,
  petLocation,
  requireJson,
  stringifyJson,
  underBase,
} from './api-rules.js'
import type { Store } from './baseline-stores.js'
import { announce, competitorOptions, exitOnSigterm, run } from './competitor-cli.js'

function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  const payload = stringifyJson(body)
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  })
  res.end(payload) // node:http drops the body itself for HEAD
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  requireJson(req.headers['content-type'], hasBody(req.headers['content-length'], req.headers['transfer-encoding']))
  // Reject early on a declared length, and still count bytes for chunked bodies.
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw payloadTooLarge()
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw payloadTooLarge()
    chunks.push(chunk as Buffer)
  }
  return parseJsonBody(Buffer.concat(chunks))
}

async function listPets(store: Store, query: URLSearchParams, res: ServerResponse): Promise<void> {
  const { page, link } = await listPage(
    store,
    parseListQuery((name) => query.getAll(name)),
  )
  sendJson(res, 200, page, link === undefined ? {} : { link })
}

async function createPet(store: Store, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const pet = await store.create(parseNewPet(await readJsonBody(req)))
  sendJson(res, 201, pet, { location: petLocation(pet) })
}

function makeHandler(store: Store, key: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const authenticate = makeAuthCheck(key)

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const path = url.pathname
    const method = req.method ?? 'GET'
    const read = method === 'GET' || method === 'HEAD'
    // Headers of every answer, errors included, set first so writeHead merges them in.
    for (const [name, value] of Object.entries(COMMON_HEADERS)) res.setHeader(name, value)
    const petMatch = /^\/v1\/pets\/([^/]+)\/*$/.exec(path)
    if (petMatch !== null && read) {
      // getPet is deprecated: every GET/HEAD of /pets/{petId} says so.
      for (const [name, value] of Object.entries(DEPRECATION_HEADERS)) res.setHeader(name, value)
    }

    if (!underBase(path)) throw notFound()
    authenticate(req.headers.authorization)
    if (/^\/v1\/pets\/*$/.test(path)) {
      if (read) return listPets(store, url.searchParams, res)
      if (method === 'POST') return createPet(store, req, res)
      throw notAllowed('GET, HEAD, POST')
    }
    if (petMatch?.[1] !== undefined) {
      if (read) return sendJson(res, 200, await findPet(store, petMatch[1]))
      throw notAllowed('GET, HEAD')
    }
    throw notFound()
  }
}

run(async () => {
  const { port, key, store } = await competitorOptions('baseline_pets')
  const handle = makeHandler(store, key)

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!(error instanceof ApiError)) console.error(error)
      const answer = error instanceof ApiError ? error : internalError()
      sendJson(res, answer.status, answer.body(), answer.headers)
    })
  })

  server.listen(port, '127.0.0.1', () => announce('baseline', (server.address() as AddressInfo).port))
  exitOnSigterm(() => {
    server.close()
    server.closeAllConnections()
  }, store)
})
