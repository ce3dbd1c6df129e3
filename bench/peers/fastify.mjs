// The Petstore API on Fastify 5, written the way Fastify's documentation
// writes a server: route schemas for the querystring, params and body
// (validated by Ajv), response schemas so that fast-json-stringify serializes,
// an onRequest hook for the headers of every answer and the bearer check, and
// one setErrorHandler that turns what Fastify reports (schema errors, bad
// media types, too-large bodies) into the API's Error body. Plain JavaScript
// run by `node`; same bytes as our binary (bench/parity.ts checks it).
//
//   node bench/peers/fastify.mjs --port 0 --key KEY --db memory|sqlite:PATH|postgres://…|mysql://… [--cursor-secret S]
//
// Where Ajv's coercion is laxer than the library, for requests the bench
// never makes: `?limit=1e1` or `?limit=%205` pass as 10 and 5 (ours: 400).
import { isUtf8 } from 'node:buffer'
import { Ajv } from 'ajv'
import Fastify from 'fastify'
import {
  allAuthorization,
  announce,
  categoryIdProblem,
  cursorCodec,
  DEPRECATION,
  exactCategoryId,
  exitOnSigterm,
  keyCheck,
  MAX_BODY_BYTES,
  MAX_LIMIT,
  MAX_NAME_LENGTH,
  MESSAGES,
  peerOptions,
  REALM,
  REALM_INVALID,
  requestId,
  run,
  STATUSES,
  SUCCESSOR,
  SUNSET,
  TEXT,
} from './common.mjs'

const GET_PET_ROUTE = '/v1/pets/:petId'

const petSchema = {
  type: 'object',
  required: ['id', 'name', 'categoryId'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: 'string' },
  },
}
const errorSchema = {
  type: 'object',
  required: ['code', 'message', 'status'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    status: { type: 'integer' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
}
const errorResponses = { '4xx': errorSchema, '5xx': errorSchema }
const listQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 20 },
    status: { type: 'string', enum: STATUSES },
    cursor: { type: 'string' },
  },
}
const newPetSchema = {
  type: 'object',
  required: ['name', 'categoryId'],
  properties: {
    // Ajv counts code points, as the library does.
    name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '\\S' },
    // An int64 may be a bigint (beyond 2^53), which no JSON Schema type matches: the `int64` keyword checks it.
    categoryId: { int64: true },
    status: { type: 'string', enum: STATUSES },
  },
}
const petIdSchema = { type: 'object', properties: { petId: { type: 'string', pattern: '^-?[0-9]+$' } } }

/** Which library message each schema keyword's failure gets, by field. */
const SCHEMA_MESSAGES = {
  limit: { type: MESSAGES.limitInteger, minimum: MESSAGES.limitRange, maximum: MESSAGES.limitRange },
  status: { type: MESSAGES.status, enum: MESSAGES.status },
  petId: { pattern: MESSAGES.petIdInteger },
  body: { type: MESSAGES.body },
  name: {
    required: MESSAGES.required,
    type: MESSAGES.nameType,
    minLength: MESSAGES.nameLength,
    maxLength: MESSAGES.nameLength,
    pattern: MESSAGES.nameBlank,
  },
  categoryId: { required: MESSAGES.required },
}
/** The library lists details in this order. */
const FIELD_ORDER = ['limit', 'petId', 'body', 'name', 'categoryId', 'status']

/** Ajv's `int64` keyword: a safe integer number or a bigint in int64, with the library's messages. */
const int64Keyword = {
  keyword: 'int64',
  schemaType: 'boolean',
  errors: true,
  validate: function int64(_schema, value) {
    const message = categoryIdProblem(value)
    int64.errors = message === undefined ? [] : [{ keyword: 'int64', message, params: {} }]
    return message === undefined
  },
}

/** An error the handler answers as it is: status, code, message, details, extra headers. */
class ApiError extends Error {
  constructor(status, code, message, details, headers) {
    super(message)
    this.status = status
    this.code = code
    this.details = details
    this.headers = headers
  }
}
const invalid = (details) =>
  new ApiError(400, 'validation_error', details.map((d) => `${d.path}: ${d.message}`).join('; '), details)
const bodyRequired = () =>
  new ApiError(400, 'validation_error', TEXT.bodyRequired, [{ path: 'body', message: MESSAGES.required }])

/** Ajv's errors as the library's details: one per field (its first failure), in the library's order. */
function schemaError(errors, context) {
  const byField = new Map()
  for (const error of errors) {
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined
    const field = missing ?? (error.instancePath.slice(1) || (context === 'body' ? 'body' : String(context)))
    if (byField.has(field)) continue
    byField.set(field, {
      path: field,
      message: SCHEMA_MESSAGES[field]?.[error.keyword] ?? error.message ?? 'is invalid',
    })
  }
  const rank = (path) => (FIELD_ORDER.indexOf(path) + FIELD_ORDER.length + 1) % (FIELD_ORDER.length + 1)
  return invalid([...byField.values()].sort((a, b) => rank(a.path) - rank(b.path)))
}

/** What the error handler answers for anything reported on the way. */
function asApiError(error) {
  if (error instanceof ApiError) return error
  if (error.validation !== undefined) return schemaError(error.validation, error.validationContext)
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ApiError(415, 'unsupported_media_type', TEXT.unsupported)
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError(413, 'payload_too_large', TEXT.tooLarge)
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return new ApiError(status, 'bad_request', error.message)
  console.error(error)
  return new ApiError(500, 'internal_error', TEXT.internal)
}

const MISSING = { code: 'unauthorized', message: TEXT.missingKey, status: 401 }
const WRONG = { code: 'unauthorized', message: TEXT.wrongKey, status: 401 }
const TWICE = { code: 'bad_request', message: TEXT.twice, status: 400 }
const NO_ROUTE = { code: 'not_found', message: TEXT.notFound, status: 404 }
const TOO_LARGE = new ApiError(413, 'payload_too_large', TEXT.tooLarge)
/** What the body parser hands on instead of a body it refuses. */
const REFUSED = Symbol('refused')
const refused = (error) => ({ [REFUSED]: error })

run(async () => {
  const { port, key, cursorSecret, store } = await peerOptions('fastify_pets')
  const checkKey = keyCheck(key)
  const cursors = cursorCodec(cursorSecret)

  const app = Fastify({
    // Node's default, as our binary keeps it (Fastify's own is 72 s).
    keepAliveTimeout: 5_000,
    exposeHeadRoutes: false,
    ignoreTrailingSlash: true,
    // The request id as ours makes it: the client's when sane, else generated.
    requestIdHeader: false,
    genReqId: (req) => requestId(req.headers['x-request-id']),
  })

  // Fastify's documented pattern for one Ajv per part: query strings and path parameters are text,
  // so they are coerced ("20" → 20); bodies are JSON and must carry the right types already.
  // allErrors, so that one answer names every field at fault, as the library's does.
  const ajvFor = {
    body: new Ajv({ coerceTypes: false, allErrors: true, removeAdditional: false }).addKeyword(int64Keyword),
    querystring: new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true }),
    params: new Ajv({ coerceTypes: true, allErrors: true }),
  }
  app.setValidatorCompiler(({ schema, httpPart }) => ajvFor[httpPart].compile(schema))

  // JSON and +json bodies, read as bytes so that bad UTF-8, bad JSON and an empty body get the library's
  // answers. A parser's error makes Fastify close the connection (ours keeps it): so the parser hands a
  // refusal on as the body, and preValidation answers it.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(
    /^application\/(?:[!#$%&'*.^_`|~0-9a-z-]+\+)?json(?:;|$)/i,
    { parseAs: 'buffer', bodyLimit: 2 * MAX_BODY_BYTES },
    (_request, bytes, done) => {
      if (bytes.length > MAX_BODY_BYTES) return done(null, refused(TOO_LARGE))
      if (!isUtf8(bytes)) return done(null, refused(new ApiError(400, 'invalid_json', TEXT.notUtf8)))
      const text = bytes.toString('utf8')
      if (text.trim() === '') return done(null, refused(bodyRequired()))
      let body
      try {
        body = JSON.parse(text)
      } catch {
        return done(null, refused(new ApiError(400, 'invalid_json', TEXT.notJson)))
      }
      if (typeof body === 'object' && body !== null && !Array.isArray(body))
        body.categoryId = exactCategoryId(text, body)
      // An array is no object to the API: a schema `type: object` failure.
      done(null, Array.isArray(body) ? null : body)
    },
  )

  app.addHook('onRequest', async (request, reply) => {
    reply.headers({
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    const method = request.method
    if ((method === 'GET' || method === 'HEAD') && request.routeOptions.url === GET_PET_ROUTE) {
      reply.headers({ deprecation: DEPRECATION, sunset: SUNSET, link: SUCCESSOR })
    }
    reply.header('x-request-id', request.id)
    const url = request.url
    // Nothing lives outside the base path, so nothing there needs a key.
    if (!(url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?'))) return
    switch (checkKey(allAuthorization(request.raw.rawHeaders, request.headers.authorization))) {
      case 1:
        return reply.code(401).header('www-authenticate', REALM).send(MISSING)
      case 2:
        return reply.code(401).header('www-authenticate', REALM_INVALID).send(WRONG)
      case 3:
        return reply.code(400).send(TWICE)
    }
  })

  // Fastify adds `; charset=utf-8` to a JSON type when it serializes; ours sends `application/json` (JSON
  // is UTF-8 by definition). A HEAD gets the GET's content-length, as from ours.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-type', 'application/json')
    return payload
  })

  app.setErrorHandler((error, _request, reply) => {
    const answer = asApiError(error)
    if (answer.headers !== undefined) reply.headers(answer.headers)
    const body = { code: answer.code, message: answer.message, status: answer.status }
    if (answer.details !== undefined) body.details = answer.details
    return reply.code(answer.status).send(body)
  })
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(NO_ROUTE))

  app.route({
    method: ['GET', 'HEAD'],
    url: '/v1/pets',
    schema: { querystring: listQuerySchema, response: { 200: { type: 'array', items: petSchema }, ...errorResponses } },
    // JSON Schema cannot tell `?limit=1&limit=2` from a bad value; the library answers it apart.
    // Before validation the values are still the parser's strings (arrays when repeated).
    preValidation: async (request) => {
      for (const name of ['limit', 'status', 'cursor']) {
        if (Array.isArray(request.query[name])) throw invalid([{ path: name, message: MESSAGES.once }])
      }
    },
    handler: async (request, reply) => {
      const { limit, status, cursor } = request.query
      const after = cursor === undefined ? 0 : cursors.decode(cursor, status)
      if (after === -1) throw invalid([{ path: 'cursor', message: MESSAGES.cursor }])
      const rows = await store.list(after, limit + 1, status)
      if (rows.length <= limit) return rows
      const page = rows.slice(0, limit)
      const next = cursors.encode(page[limit - 1].id, status)
      reply.header(
        'link',
        `</v1/pets?limit=${limit}${status === undefined ? '' : `&status=${status}`}&cursor=${next}>; rel="next"`,
      )
      return page
    },
  })

  app.post(
    '/v1/pets',
    {
      schema: { body: newPetSchema, response: { 201: petSchema, ...errorResponses } },
      // A declared length over the limit is refused before reading, as ours does (after the key check).
      onRequest: async (request, reply) => {
        if (Number(request.headers['content-length']) > MAX_BODY_BYTES) {
          return reply.code(413).send({ code: TOO_LARGE.code, message: TOO_LARGE.message, status: 413 })
        }
      },
      // Neither Content-Type nor body: Fastify parses nothing and would validate `undefined`.
      preValidation: async (request) => {
        const body = request.body
        if (body === undefined) throw bodyRequired()
        if (body?.[REFUSED] !== undefined) throw body[REFUSED]
      },
    },
    async (request, reply) => {
      const { name, categoryId, status } = request.body
      const pet = await store.create({ name, categoryId, status })
      return reply.code(201).header('location', `/v1/pets/${pet.id}`).send(pet)
    },
  )

  app.route({
    method: ['GET', 'HEAD'],
    url: GET_PET_ROUTE,
    schema: { params: petIdSchema, response: { 200: petSchema, ...errorResponses } },
    handler: async (request, reply) => {
      const text = request.params.petId
      if (text.length > 15 && (BigInt(text) < -(2n ** 63n) || BigInt(text) >= 2n ** 63n)) {
        throw invalid([{ path: 'petId', message: MESSAGES.petIdRange }])
      }
      const id = Number(text)
      const pet = Number.isSafeInteger(id) ? await store.get(id) : undefined
      if (pet === undefined)
        return reply.code(404).send({ code: 'not_found', message: `No pet with id ${text}`, status: 404 })
      return pet
    },
  })

  // Fastify answers other methods with 404; the library with 405 and Allow.
  const otherMethods = ['DELETE', 'OPTIONS', 'PATCH', 'PUT']
  const notAllowed = (allow) => async (_request, reply) =>
    reply
      .code(405)
      .header('allow', allow)
      .send({ code: 'method_not_allowed', message: `Method not allowed; use ${allow}`, status: 405 })
  app.route({ method: otherMethods, url: '/v1/pets', handler: notAllowed('GET, HEAD, POST') })
  app.route({ method: [...otherMethods, 'POST'], url: GET_PET_ROUTE, handler: notAllowed('GET, HEAD') })

  await app.listen({ port, host: '127.0.0.1' })
  announce('fastify', app.server.address().port)
  exitOnSigterm(app.server, store)
})
