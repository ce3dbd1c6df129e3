// Competitor for the benchmark: the Petstore API written the way a Fastify 5
// user would, with route JSON schemas for validation (Ajv) and response
// serialization (fast-json-stringify), hooks for the headers and the bearer
// check, and one error handler that turns everything into the API's Error body.
// It answers exactly what the library answers for every request the benchmark
// makes (bench/parity.ts checks it on every run).
//
//   tsx bench/fastify-server.ts --port 0 --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… --key KEY
//
// The rules the schemas cannot express (auth, cursor, repeated parameters,
// 64-bit ids, the messages) are bench/api-rules.ts, shared with the other
// competitors; the pets live in fastify_pets.
//
// Where the schema's coercion is laxer than the library, for requests the
// benchmark never makes: `?limit=1e1` or `?limit=%205` pass as 10 and 5
// (the library answers 400).
import { Ajv, type ErrorObject, type KeywordDefinition } from 'ajv'
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify'
import {
  ApiError,
  bodyRequired,
  COMMON_HEADERS,
  categoryIdProblem,
  DEFAULT_LIMIT,
  DEPRECATION_HEADERS,
  type Detail,
  decodeCursor,
  findPet,
  internalError,
  invalid,
  JSON_MEDIA_TYPE,
  listPage,
  MAX_BODY_BYTES,
  MAX_LIMIT,
  MAX_NAME_LENGTH,
  MESSAGES,
  makeAuthCheck,
  notAllowed,
  notFound,
  parseJsonBody,
  payloadTooLarge,
  petLocation,
  type QueryValue,
  rejectRepeated,
  underBase,
  unsupportedMediaType,
} from './api-rules.js'
import { type NewPet, STATUSES, type Status } from './baseline-stores.js'
import { announce, competitorOptions, exitOnSigterm, run } from './competitor-cli.js'

const GET_PET_ROUTE = '/v1/pets/:petId'

const petSchema = {
  type: 'object',
  required: ['id', 'name', 'categoryId'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: 'string', enum: STATUSES },
  },
} as const

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
} as const

const errorResponses = { '4xx': errorSchema, '5xx': errorSchema } as const

const listQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    status: { type: 'string', enum: STATUSES },
    cursor: { type: 'string' },
  },
} as const

const newPetSchema = {
  type: 'object',
  required: ['name', 'categoryId'],
  properties: {
    // Ajv counts code points, as the library does.
    name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '\\S' },
    // An int64 may arrive as a bigint (parseJsonBody makes one beyond 2^53), which no JSON Schema type
    // matches: the `int64` keyword (added to Ajv below) checks it, with the library's messages.
    categoryId: { int64: true },
    status: { type: 'string', enum: STATUSES },
  },
} as const

const petIdSchema = {
  type: 'object',
  properties: { petId: { type: 'string', pattern: '^-?[0-9]+$' } },
} as const

/** Which library message each schema keyword's failure gets, by field. */
const SCHEMA_MESSAGES: Record<string, Record<string, string>> = {
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
  // The `int64` keyword's errors carry the library's message themselves.
  categoryId: { required: MESSAGES.required },
}
/** The library lists details in this order (query: limit, status; body: name, categoryId, status). */
const FIELD_ORDER = ['limit', 'petId', 'body', 'name', 'categoryId', 'status']

/** Ajv's `int64` keyword: a safe integer number or a bigint in int64; its error message is the library's. */
const int64Keyword: KeywordDefinition = {
  keyword: 'int64',
  schemaType: 'boolean',
  errors: true,
  validate: function int64(_schema: boolean, value: unknown): boolean {
    const message = categoryIdProblem(value)
    ;(int64 as { errors?: Partial<ErrorObject>[] }).errors =
      message === undefined ? [] : [{ keyword: 'int64', message, params: {} }]
    return message === undefined
  },
}

/** Ajv's errors as the library's details: one per field (the first failure), in the library's order. */
function schemaError(errors: readonly ErrorObject[], context: string | undefined): ApiError {
  const byField = new Map<string, Detail>()
  for (const error of errors) {
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined
    const field = missing ?? (error.instancePath.slice(1) || (context === 'body' ? 'body' : String(context)))
    if (byField.has(field)) continue
    byField.set(field, {
      path: field,
      message: SCHEMA_MESSAGES[field]?.[error.keyword] ?? error.message ?? 'is invalid',
    })
  }
  const rank = (path: string) => (FIELD_ORDER.indexOf(path) + FIELD_ORDER.length + 1) % (FIELD_ORDER.length + 1)
  return invalid([...byField.values()].sort((a, b) => rank(a.path) - rank(b.path)))
}

/** What the error handler answers for anything thrown or reported on the way. */
function asApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error
  if (error.validation !== undefined) return schemaError(error.validation as ErrorObject[], error.validationContext)
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return unsupportedMediaType()
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge()
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return new ApiError(status, 'bad_request', error.message)
  console.error(error)
  return internalError()
}

run(async () => {
  const { port, key, store } = await competitorOptions('fastify_pets')
  const authenticate = makeAuthCheck(key)

  const app = Fastify({ bodyLimit: MAX_BODY_BYTES, ignoreTrailingSlash: true })

  // Fastify's documented pattern for one Ajv per part: query strings and path
  // parameters are text, so they are coerced ("20" → 20); bodies are JSON and
  // must carry the right types already (no "7" for 7). allErrors, so that one
  // answer names every field at fault, as the library's does.
  const ajvFor = {
    body: new Ajv({ coerceTypes: false, allErrors: true, removeAdditional: false }).addKeyword(int64Keyword),
    querystring: new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true }),
    params: new Ajv({ coerceTypes: true, allErrors: true }),
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = ajvFor[httpPart as keyof typeof ajvFor]
    if (ajv === undefined) throw new Error(`no validator for ${httpPart}`)
    return ajv.compile(schema)
  })

  // JSON and +json bodies, read as bytes so that bad UTF-8, bad JSON and an
  // empty body get the library's distinct answers.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(
    new RegExp(JSON_MEDIA_TYPE.source.replace(/\$$/, '(?:;|$)'), 'i'),
    { parseAs: 'buffer' },
    (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as Buffer))
      } catch (error) {
        done(error as Error, undefined)
      }
    },
  )

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(COMMON_HEADERS)
    const read = request.method === 'GET' || request.method === 'HEAD'
    if (read && request.routeOptions.url === GET_PET_ROUTE) reply.headers(DEPRECATION_HEADERS)
    const path = request.url.split('?', 1)[0] ?? '/'
    // Nothing lives outside the base path, so nothing there needs a key.
    if (underBase(path)) authenticate(request.headers.authorization)
  })

  app.setErrorHandler((error: FastifyError | ApiError, _request: FastifyRequest, reply: FastifyReply) => {
    const answer = asApiError(error)
    return reply.code(answer.status).headers(answer.headers).send(answer.body())
  })
  app.setNotFoundHandler(() => {
    throw notFound()
  })

  app.get<{ Querystring: { limit: number; status?: Status; cursor?: string } }>(
    '/v1/pets',
    {
      schema: {
        querystring: listQuerySchema,
        response: { 200: { type: 'array', items: petSchema }, ...errorResponses },
      },
      // JSON schema cannot tell `?limit=1&limit=2` from a bad value; the library answers it apart.
      // Before validation the values are still the parser's strings (arrays when repeated).
      preValidation: async (request) =>
        rejectRepeated((name) => (request.query as unknown as Record<string, QueryValue>)[name]),
    },
    async (request, reply) => {
      const { limit, status, cursor } = request.query
      const { page, link } = await listPage(store, { limit, status, afterId: decodeCursor(cursor, status) })
      if (link !== undefined) reply.header('link', link)
      return page
    },
  )

  app.post<{ Body: NewPet }>(
    '/v1/pets',
    {
      schema: { body: newPetSchema, response: { 201: petSchema, ...errorResponses } },
      // Neither Content-Type nor body: Fastify parses nothing and would validate `undefined`.
      preValidation: async (request) => {
        if (request.body === undefined) throw bodyRequired()
      },
    },
    async (request, reply) => {
      const { name, categoryId, status } = request.body
      const pet = await store.create({ name, categoryId, status })
      return reply.code(201).header('location', petLocation(pet)).send(pet)
    },
  )

  app.get<{ Params: { petId: string } }>(
    GET_PET_ROUTE,
    { schema: { params: petIdSchema, response: { 200: petSchema, ...errorResponses } } },
    async (request) => findPet(store, request.params.petId),
  )

  // Fastify answers other methods with 404; the library with 405 and Allow.
  const otherMethods = ['DELETE', 'OPTIONS', 'PATCH', 'PUT'] as const
  app.route({
    method: [...otherMethods],
    url: '/v1/pets',
    handler: async () => {
      throw notAllowed('GET, HEAD, POST')
    },
  })
  app.route({
    method: [...otherMethods, 'POST'],
    url: GET_PET_ROUTE,
    handler: async () => {
      throw notAllowed('GET, HEAD')
    },
  })

  await app.listen({ port, host: '127.0.0.1' })
  announce('fastify', (app.server.address() as { port: number }).port)
  exitOnSigterm(() => {
    app.server.close()
    app.server.closeAllConnections()
  }, store)
})
