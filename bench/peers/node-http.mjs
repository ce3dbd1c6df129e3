// The yardstick: the Petstore API written by hand on node:http, plain
// JavaScript run by `node` with no loader, the way an expert writes a lean
// server. It answers what our binary answers, byte for byte in status, body
// and the API's headers (bench/parity.ts checks it before every run).
//
//   node bench/peers/node-http.mjs --port 0 --key KEY --db memory|sqlite:PATH|postgres://…|mysql://… [--cursor-secret S]
//
// How it stays lean: no exceptions for control flow (every check returns);
// one writeHead(status, flat header array) + end(body) per answer, with the
// fixed answers (401, 404, 405, 415, 413…) as constant texts and lengths; the
// URL split by hand (no `new URL`; URLSearchParams only for a query holding
// `%` or `+`); a body read with 'data'/'end' listeners shared by all requests
// (their state lives on the request); pets written as JSON by a template
// (pages written by the database where the store can: SQLite, PostgreSQL).
// Not served, because the bench never asks: /v1/openapi.json, /healthz, CORS.
import { isUtf8 } from 'node:buffer'
import { createServer } from 'node:http'
import {
  allAuthorization,
  announce,
  cursorCodec,
  DEPRECATION,
  errorJson,
  exactCategoryId,
  exitOnSigterm,
  invalidJson,
  isJsonType,
  keyCheck,
  MAX_BODY_BYTES,
  MAX_LIMIT,
  MESSAGES,
  newPetDetails,
  peerOptions,
  petJson,
  petsJson,
  REALM,
  REALM_INVALID,
  requestId,
  run,
  STATUSES,
  SUCCESSOR,
  SUNSET,
  TEXT,
} from './common.mjs'

const JSON_TYPE = 'application/json'
const AMBIGUOUS = /^[^?#]*?(?:\\|%2f|%5c|\/(?:\.|%2e){1,2}(?:[/?#]|$))/i
const PETS = '/v1/pets'

/** A fixed answer: its body and byte length computed once. */
function fixed(status, code, message, details) {
  const body = errorJson(status, code, message, details)
  return { status, body, length: Buffer.byteLength(body) }
}
const MISSING = fixed(401, 'unauthorized', TEXT.missingKey)
const WRONG = fixed(401, 'unauthorized', TEXT.wrongKey)
const TWICE = fixed(400, 'bad_request', TEXT.twice)
const AMBIGUOUS_PATH = fixed(
  400,
  'bad_request',
  'The request path is ambiguous: it holds a backslash, a dot segment (. or .., also as %2e) or an encoded / or \\ (%2f, %5c)',
)
const NO_ROUTE = fixed(404, 'not_found', TEXT.notFound)
const UNSUPPORTED = fixed(415, 'unsupported_media_type', TEXT.unsupported)
const TOO_LARGE = fixed(413, 'payload_too_large', TEXT.tooLarge)
const NOT_UTF8 = fixed(400, 'invalid_json', TEXT.notUtf8)
const NOT_JSON = fixed(400, 'invalid_json', TEXT.notJson)
const BODY_REQUIRED = fixed(400, 'validation_error', TEXT.bodyRequired, [{ path: 'body', message: MESSAGES.required }])
const NOT_OBJECT = fixed(400, 'validation_error', `body: ${MESSAGES.body}`, [{ path: 'body', message: MESSAGES.body }])
const BAD_CURSOR = fixed(400, 'validation_error', `cursor: ${MESSAGES.cursor}`, [
  { path: 'cursor', message: MESSAGES.cursor },
])
const PET_ID_INTEGER = fixed(400, 'validation_error', `petId: ${MESSAGES.petIdInteger}`, [
  { path: 'petId', message: MESSAGES.petIdInteger },
])
const PET_ID_RANGE = fixed(400, 'validation_error', `petId: ${MESSAGES.petIdRange}`, [
  { path: 'petId', message: MESSAGES.petIdRange },
])
const ONCE = Object.fromEntries(
  ['limit', 'status', 'cursor'].map((name) => [
    name,
    fixed(400, 'validation_error', `${name}: ${MESSAGES.once}`, [{ path: name, message: MESSAGES.once }]),
  ]),
)
const INTERNAL = fixed(500, 'internal_error', TEXT.internal)
const LIST_ALLOW = 'GET, HEAD, POST'
const PET_ALLOW = 'GET, HEAD'
const NOT_ALLOWED_LIST = fixed(405, 'method_not_allowed', `Method not allowed; use ${LIST_ALLOW}`)
const NOT_ALLOWED_PET = fixed(405, 'method_not_allowed', `Method not allowed; use ${PET_ALLOW}`)

/**
 * Writes one answer: `extra` (a flat [name, value…] list or undefined) first, then the
 * headers of every answer, the deprecation headers when `deprecated`, the request id.
 * HEAD gets the same head, content-length included; node:http sends it no body by itself.
 */
function send(res, status, body, length, extra, deprecated, id) {
  const headers = extra === undefined ? [] : extra
  headers.push('content-type', JSON_TYPE, 'cache-control', 'no-store', 'x-content-type-options', 'nosniff')
  if (deprecated) headers.push('deprecation', DEPRECATION, 'sunset', SUNSET, 'link', SUCCESSOR)
  headers.push('x-request-id', id)
  headers.push('content-length', length)
  res.writeHead(status, headers)
  res.end(body)
}

function sendFixed(res, answer, deprecated, id) {
  send(res, answer.status, answer.body, answer.length, undefined, deprecated, id)
}

function sendJson(res, status, body, extra, deprecated, id) {
  send(res, status, body, Buffer.byteLength(body), extra, deprecated, id)
}

run(async () => {
  const { port, key, cursorSecret, store } = await peerOptions('node_http_pets')
  const checkKey = keyCheck(key)
  const cursors = cursorCodec(cursorSecret)
  const { sync } = store

  /** A store failure: logged, answered 500. */
  function failed(res, error, deprecated, id) {
    console.error(error)
    if (!res.headersSent) sendFixed(res, INTERNAL, deprecated, id)
  }

  function sendPage(res, page, limit, status, id) {
    const extra =
      page.more && page.lastId !== undefined
        ? [
            'link',
            `<${PETS}?limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${cursors.encode(page.lastId, status)}>; rel="next"`,
          ]
        : undefined
    sendJson(res, 200, page.json, extra, false, id)
  }

  function sendPets(res, pets, limit, status, id) {
    const more = pets.length > limit
    const count = more ? limit : pets.length
    sendPage(
      res,
      { json: petsJson(pets, count), lastId: count > 0 ? pets[count - 1].id : undefined, more },
      limit,
      status,
      id,
    )
  }

  function list(res, query, id) {
    let limitText
    let status
    let cursor
    let limitSeen = 0
    let statusSeen = 0
    let cursorSeen = 0
    if (query !== undefined && query !== '') {
      if (query.includes('%') || query.includes('+')) {
        // Percent-encoded or `+`: decoded as URLSearchParams decodes (rare; the bench sends plain queries).
        const params = new URLSearchParams(query)
        const limits = params.getAll('limit')
        const statuses = params.getAll('status')
        const cursorsGiven = params.getAll('cursor')
        limitSeen = limits.length
        statusSeen = statuses.length
        cursorSeen = cursorsGiven.length
        limitText = limits[0]
        status = statuses[0]
        cursor = cursorsGiven[0]
      } else {
        let start = 0
        while (start <= query.length) {
          let end = query.indexOf('&', start)
          if (end === -1) end = query.length
          const equals = query.indexOf('=', start)
          const nameEnd = equals === -1 || equals > end ? end : equals
          const valueStart = nameEnd === end ? end : nameEnd + 1
          const length = nameEnd - start
          if (length === 5 && query.startsWith('limit', start)) {
            if (limitSeen++ === 0) limitText = query.slice(valueStart, end)
          } else if (length === 6 && query.startsWith('status', start)) {
            if (statusSeen++ === 0) status = query.slice(valueStart, end)
          } else if (length === 6 && query.startsWith('cursor', start)) {
            if (cursorSeen++ === 0) cursor = query.slice(valueStart, end)
          }
          start = end + 1
        }
      }
    }
    if (limitSeen > 1) return sendFixed(res, ONCE.limit, false, id)
    if (statusSeen > 1) return sendFixed(res, ONCE.status, false, id)
    if (cursorSeen > 1) return sendFixed(res, ONCE.cursor, false, id)
    let limit = 20
    let details
    if (limitText !== undefined) {
      limit = /^[0-9]+$/.test(limitText) ? Number(limitText) : -1
      if (limit === -1) details = [{ path: 'limit', message: MESSAGES.limitInteger }]
      else if (!(limit >= 1 && limit <= MAX_LIMIT)) details = [{ path: 'limit', message: MESSAGES.limitRange }]
    }
    if (status !== undefined && !STATUSES.includes(status)) {
      details ??= []
      details.push({ path: 'status', message: MESSAGES.status })
    }
    if (details !== undefined) return sendJson(res, 400, invalidJson(details), undefined, false, id)
    let after = 0
    if (cursor !== undefined) {
      after = cursors.decode(cursor, status)
      if (after === -1) return sendFixed(res, BAD_CURSOR, false, id)
    }
    if (store.listJson !== undefined) {
      const page = store.listJson(after, limit, status)
      if (sync) return sendPage(res, page, limit, status, id)
      return page.then(
        (found) => sendPage(res, found, limit, status, id),
        (error) => failed(res, error, false, id),
      )
    }
    const pets = store.list(after, limit + 1, status)
    if (sync) return sendPets(res, pets, limit, status, id)
    return pets.then(
      (found) => sendPets(res, found, limit, status, id),
      (error) => failed(res, error, false, id),
    )
  }

  function sendPet(res, pet, text, id) {
    if (pet === undefined) {
      return sendJson(res, 404, errorJson(404, 'not_found', `No pet with id ${text}`), undefined, true, id)
    }
    sendJson(res, 200, petJson(pet), undefined, true, id)
  }

  function get(res, raw, id) {
    let text = raw
    if (raw.includes('%')) {
      try {
        text = decodeURIComponent(raw)
      } catch {} // not percent-decodable: the check below refuses it
    }
    if (!/^-?[0-9]+$/.test(text)) return sendFixed(res, PET_ID_INTEGER, true, id)
    if (text.length > 15 && (BigInt(text) < -(2n ** 63n) || BigInt(text) >= 2n ** 63n)) {
      return sendFixed(res, PET_ID_RANGE, true, id)
    }
    const number = Number(text)
    if (!Number.isSafeInteger(number)) return sendPet(res, undefined, text, id)
    const pet = store.get(number)
    if (sync) return sendPet(res, pet, text, id)
    pet.then(
      (found) => sendPet(res, found, text, id),
      (error) => failed(res, error, true, id),
    )
  }

  function created(res, pet, id) {
    sendJson(res, 201, petJson(pet), ['location', `${PETS}/${pet.id}`], false, id)
  }

  /** The whole body is in: check it, store the pet. */
  function onEnd() {
    const res = this.peerRes
    const id = this.peerId
    if (this.peerSize < 0) return // answered 413 already
    const chunks = this.peerChunks
    const bytes = chunks === undefined ? Buffer.alloc(0) : Array.isArray(chunks) ? Buffer.concat(chunks) : chunks
    if (!isUtf8(bytes)) return sendFixed(res, NOT_UTF8, false, id)
    const text = bytes.toString('utf8')
    if (text.trim() === '') return sendFixed(res, BODY_REQUIRED, false, id)
    let body
    try {
      body = JSON.parse(text)
    } catch {
      return sendFixed(res, NOT_JSON, false, id)
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return sendFixed(res, NOT_OBJECT, false, id)
    const categoryId = exactCategoryId(text, body)
    const input = { name: body.name, categoryId, status: body.status }
    const details = newPetDetails(input)
    if (details.length > 0) return sendJson(res, 400, invalidJson(details), undefined, false, id)
    let pet
    try {
      pet = store.create(input)
    } catch (error) {
      // A 'end' listener runs outside the request's try: a failing SQLite write must not end the process.
      return failed(res, error, false, id)
    }
    if (sync) return created(res, pet, id)
    pet.then(
      (found) => created(res, found, id),
      (error) => failed(res, error, false, id),
    )
  }

  function onData(chunk) {
    if (this.peerSize < 0) return
    this.peerSize += chunk.length
    if (this.peerSize > MAX_BODY_BYTES) {
      this.peerSize = -1
      sendFixed(this.peerRes, TOO_LARGE, false, this.peerId)
      return
    }
    const chunks = this.peerChunks
    if (chunks === undefined) this.peerChunks = chunk
    else if (Array.isArray(chunks)) chunks.push(chunk)
    else this.peerChunks = [chunks, chunk]
  }

  function create(req, res, id) {
    const headers = req.headers
    const contentType = headers['content-type']
    const length = headers['content-length']
    const hasBody = headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
    if (contentType === undefined ? hasBody : !isJsonType(contentType)) return sendFixed(res, UNSUPPORTED, false, id)
    if (!hasBody) return sendFixed(res, BODY_REQUIRED, false, id)
    if (Number(length) > MAX_BODY_BYTES) return sendFixed(res, TOO_LARGE, false, id)
    req.peerRes = res
    req.peerId = id
    req.peerSize = 0
    req.peerChunks = undefined
    req.on('data', onData)
    req.on('end', onEnd)
  }

  function handle(req, res) {
    const url = req.url
    const id = requestId(req.headers['x-request-id'])
    if (AMBIGUOUS.test(url)) return sendFixed(res, AMBIGUOUS_PATH, false, id)
    const mark = url.indexOf('?')
    const path = mark === -1 ? url : url.slice(0, mark)
    let end = path.length
    while (end > 1 && path.charCodeAt(end - 1) === 47) end--
    const route = end === path.length ? path : path.slice(0, end)
    const method = req.method
    const read = method === 'GET' || method === 'HEAD'
    // GET/HEAD /v1/pets/{petId} is deprecated: its every answer says so, refusals included.
    const petId =
      route.length > PETS.length + 1 && route.startsWith(`${PETS}/`) && route.indexOf('/', PETS.length + 1) === -1
        ? route.slice(PETS.length + 1)
        : undefined
    const deprecated = read && petId !== undefined
    if (!(path === '/v1' || path.startsWith('/v1/'))) return sendFixed(res, NO_ROUTE, deprecated, id)
    const headers = req.headers
    switch (checkKey(allAuthorization(req.rawHeaders, headers.authorization))) {
      case 1:
        return send(res, 401, MISSING.body, MISSING.length, ['www-authenticate', REALM], deprecated, id)
      case 2:
        return send(res, 401, WRONG.body, WRONG.length, ['www-authenticate', REALM_INVALID], deprecated, id)
      case 3:
        return sendFixed(res, TWICE, deprecated, id)
    }
    if (route === PETS) {
      if (read) return list(res, mark === -1 ? undefined : url.slice(mark + 1), id)
      if (method === 'POST') return create(req, res, id)
      return send(res, 405, NOT_ALLOWED_LIST.body, NOT_ALLOWED_LIST.length, ['allow', LIST_ALLOW], false, id)
    }
    if (petId !== undefined) {
      if (read) return get(res, petId, id)
      return send(res, 405, NOT_ALLOWED_PET.body, NOT_ALLOWED_PET.length, ['allow', PET_ALLOW], false, id)
    }
    sendFixed(res, NO_ROUTE, false, id)
  }

  const server = createServer((req, res) => {
    try {
      handle(req, res)
    } catch (error) {
      failed(res, error, false, requestId(undefined))
    }
  })
  server.listen(port, '127.0.0.1', () => announce('node-http', server.address().port))
  exitOnSigterm(server, store)
})
