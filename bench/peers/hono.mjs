// The Petstore API on Hono 4, served on Node by @hono/node-server exactly as
// its README shows: `serve({ fetch: app.fetch, port })`. One middleware for
// the headers of every answer, the request id and the bearer check; routes
// that read the query with c.req.query()/queries(), the body with
// `await c.req.arrayBuffer()` (node-server's fast path: the body is read off
// the IncomingMessage into one Buffer, no web stream), and answer with
// c.json(); app.onError for the 500. Plain JavaScript run by `node`; same
// bytes as our binary (bench/parity.ts checks it).
//
//   node bench/peers/hono.mjs --port 0 --key KEY --db memory|sqlite:PATH|postgres://…|mysql://… [--cursor-secret S]
//
// Why the old Hono peer's create ran at a quarter of the baseline: it used
// hono/body-limit, which reads `c.req.raw.body` as a web ReadableStream;
// that makes @hono/node-server build a full web Request (stream, headers,
// AbortSignal) for each create instead of its lightweight one. The size
// limit is checked here on Content-Length and on the bytes read.
import { isUtf8 } from 'node:buffer'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import {
  allAuthorization,
  announce,
  cursorCodec,
  DEPRECATION,
  exactCategoryId,
  exitOnSigterm,
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

const error = (status, code, message, details) =>
  details === undefined ? { code, message, status } : { code, message, status, details }
const invalid = (details) =>
  error(400, 'validation_error', details.map((d) => `${d.path}: ${d.message}`).join('; '), details)
const MISSING = error(401, 'unauthorized', TEXT.missingKey)
const WRONG = error(401, 'unauthorized', TEXT.wrongKey)
const TWICE = error(400, 'bad_request', TEXT.twice)
const NO_ROUTE = error(404, 'not_found', TEXT.notFound)
const BODY_REQUIRED = error(400, 'validation_error', TEXT.bodyRequired, [{ path: 'body', message: MESSAGES.required }])
const GET_PET = /^\/v1\/pets\/[^/]+\/*$/

/** c.json, or for a bigint categoryId (which JSON.stringify refuses) the same text written by petJson. */
function petResponse(c, pets, status) {
  if (
    typeof (Array.isArray(pets) ? pets.find((pet) => typeof pet.categoryId === 'bigint') : pets.categoryId) !== 'bigint'
  ) {
    return c.json(pets, status)
  }
  return c.body(Array.isArray(pets) ? petsJson(pets, pets.length) : petJson(pets), status)
}

run(async () => {
  const { port, key, cursorSecret, store } = await peerOptions('hono_pets')
  const checkKey = keyCheck(key)
  const cursors = cursorCodec(cursorSecret)

  // strict: false, so that /v1/pets/ is /v1/pets, as in the library.
  const app = new Hono({ strict: false })

  app.onError((err, c) => {
    console.error(err)
    return c.json(error(500, 'internal_error', TEXT.internal), 500)
  })
  app.notFound((c) => c.json(NO_ROUTE, 404))

  // Hono answers a HEAD with its GET's head, without the content-length that @hono/node-server
  // counts only when it writes a body (ours and Fastify send it): the GET is made, and its body
  // counted. HEAD is not benched; a GET pays one comparison for it.
  async function headOf(c) {
    const get = await app.fetch(new Request(c.req.url, { headers: c.req.raw.headers }), c.env)
    const headers = new Headers(get.headers)
    headers.set('content-length', String((await get.arrayBuffer()).byteLength))
    return new Response(null, { status: get.status, headers })
  }

  app.use(async (c, next) => {
    c.header('content-type', 'application/json')
    c.header('cache-control', 'no-store')
    c.header('x-content-type-options', 'nosniff')
    const method = c.req.method
    if (method === 'HEAD') return headOf(c)
    const path = c.req.path
    // GET/HEAD /v1/pets/{petId} is deprecated: every answer says so, refusals included.
    if ((method === 'GET' || method === 'HEAD') && GET_PET.test(path)) {
      c.header('deprecation', DEPRECATION)
      c.header('sunset', SUNSET)
      c.header('link', SUCCESSOR)
    }
    c.header('x-request-id', requestId(c.req.header('x-request-id')))
    if (path === '/v1' || path.startsWith('/v1/')) {
      // Node's headers keep one Authorization; a repeated one must be seen (and refused).
      const incoming = c.env.incoming
      switch (checkKey(allAuthorization(incoming.rawHeaders, incoming.headers.authorization))) {
        case 1:
          c.header('www-authenticate', REALM)
          return c.json(MISSING, 401)
        case 2:
          c.header('www-authenticate', REALM_INVALID)
          return c.json(WRONG, 401)
        case 3:
          return c.json(TWICE, 400)
      }
    }
    await next()
  })

  app.get('/v1/pets', async (c) => {
    const limits = c.req.queries('limit')
    const statuses = c.req.queries('status')
    const given = c.req.queries('cursor')
    for (const [name, values] of [
      ['limit', limits],
      ['status', statuses],
      ['cursor', given],
    ]) {
      if (values !== undefined && values.length > 1)
        return c.json(invalid([{ path: name, message: MESSAGES.once }]), 400)
    }
    const limitText = limits?.[0]
    const status = statuses?.[0]
    const details = []
    const limit = limitText === undefined ? 20 : /^[0-9]+$/.test(limitText) ? Number(limitText) : -1
    if (limit === -1) details.push({ path: 'limit', message: MESSAGES.limitInteger })
    else if (!(limit >= 1 && limit <= MAX_LIMIT)) details.push({ path: 'limit', message: MESSAGES.limitRange })
    if (status !== undefined && !STATUSES.includes(status)) details.push({ path: 'status', message: MESSAGES.status })
    if (details.length > 0) return c.json(invalid(details), 400)
    const cursor = given?.[0]
    const after = cursor === undefined ? 0 : cursors.decode(cursor, status)
    if (after === -1) return c.json(invalid([{ path: 'cursor', message: MESSAGES.cursor }]), 400)
    const rows = await store.list(after, limit + 1, status)
    if (rows.length <= limit) return petResponse(c, rows, 200)
    const page = rows.slice(0, limit)
    const next = cursors.encode(page[limit - 1].id, status)
    c.header(
      'link',
      `</v1/pets?limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${next}>; rel="next"`,
    )
    return petResponse(c, page, 200)
  })

  app.post('/v1/pets', async (c) => {
    const contentType = c.req.header('content-type')
    const length = c.req.header('content-length')
    const hasBody = c.req.header('transfer-encoding') !== undefined || (length !== undefined && length !== '0')
    if (contentType === undefined ? hasBody : !isJsonType(contentType)) {
      return c.json(error(415, 'unsupported_media_type', TEXT.unsupported), 415)
    }
    if (!hasBody) return c.json(BODY_REQUIRED, 400)
    const tooLarge = () => c.json(error(413, 'payload_too_large', TEXT.tooLarge), 413)
    if (Number(length) > MAX_BODY_BYTES) return tooLarge()
    const bytes = Buffer.from(await c.req.arrayBuffer())
    if (bytes.length > MAX_BODY_BYTES) return tooLarge()
    if (!isUtf8(bytes)) return c.json(error(400, 'invalid_json', TEXT.notUtf8), 400)
    const text = bytes.toString('utf8')
    if (text.trim() === '') return c.json(BODY_REQUIRED, 400)
    let body
    try {
      body = JSON.parse(text)
    } catch {
      return c.json(error(400, 'invalid_json', TEXT.notJson), 400)
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return c.json(invalid([{ path: 'body', message: MESSAGES.body }]), 400)
    }
    const input = { name: body.name, categoryId: exactCategoryId(text, body), status: body.status }
    const problems = newPetDetails(input)
    if (problems.length > 0) return c.json(invalid(problems), 400)
    const pet = await store.create(input)
    c.header('location', `/v1/pets/${pet.id}`)
    return petResponse(c, pet, 201)
  })

  app.get('/v1/pets/:petId', async (c) => {
    const raw = c.req.param('petId')
    if (!/^-?[0-9]+$/.test(raw)) return c.json(invalid([{ path: 'petId', message: MESSAGES.petIdInteger }]), 400)
    if (raw.length > 15 && (BigInt(raw) < -(2n ** 63n) || BigInt(raw) >= 2n ** 63n)) {
      return c.json(invalid([{ path: 'petId', message: MESSAGES.petIdRange }]), 400)
    }
    const id = Number(raw)
    const pet = Number.isSafeInteger(id) ? await store.get(id) : undefined
    if (pet === undefined) return c.json(error(404, 'not_found', `No pet with id ${raw}`), 404)
    return petResponse(c, pet, 200)
  })

  // The library answers other methods on its routes with 405 and Allow.
  const notAllowed = (allow) => (c) => {
    c.header('allow', allow)
    return c.json(error(405, 'method_not_allowed', `Method not allowed; use ${allow}`), 405)
  }
  app.on(['PUT', 'DELETE', 'PATCH', 'OPTIONS'], '/v1/pets', notAllowed('GET, HEAD, POST'))
  app.on(['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'POST'], '/v1/pets/:petId', notAllowed('GET, HEAD'))

  const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => announce('hono', info.port))
  exitOnSigterm(server, store)
})
