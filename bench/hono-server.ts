// Competitor for the benchmark: the Petstore API written the way a Hono 4 user
// would, served on Node by @hono/node-server: middleware for the headers and
// the bearer check, Hono's validator() for the query, bodyLimit() and
// methodNotAllowed() from its middleware, app.onError for the Error body.
// It answers exactly what the library answers for every request the benchmark
// makes (bench/parity.ts checks it on every run).
//
//   tsx bench/hono-server.ts --port 0 --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… --key KEY
//
// The rules (auth, cursor, validation, messages) are bench/api-rules.ts,
// shared with the other competitors; the pets live in hono_pets. The body is
// read by hand rather than with validator('json'): that one answers a wrong
// Content-Type, bad JSON and an empty body all alike, the library apart.
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { type Context, Hono, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { methodNotAllowed } from 'hono/method-not-allowed'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { validator } from 'hono/validator'
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
} from './api-rules.js'
import { announce, competitorOptions, exitOnSigterm, run } from './competitor-cli.js'

function setHeaders(headers: Readonly<Record<string, string>>): MiddlewareHandler {
  return async (c, next) => {
    for (const [name, value] of Object.entries(headers)) c.header(name, value)
    await next()
  }
}

/** `c.json`, or, for a bigint categoryId (which `JSON.stringify` refuses, so c.json throws), the same text by stringifyJson. */
function petsJson(c: Context, value: unknown, status: ContentfulStatusCode, headers: Record<string, string> = {}) {
  try {
    return c.json(value, status, headers)
  } catch {
    return c.body(stringifyJson(value), status, { ...headers, 'content-type': 'application/json' })
  }
}

run(async () => {
  const { port, key, store } = await competitorOptions('hono_pets')
  const authenticate = makeAuthCheck(key)

  // strict: false, so that /v1/pets/ is /v1/pets, as in the library.
  const app = new Hono({ strict: false })

  app.onError((error, c) => {
    if (!(error instanceof ApiError)) console.error(error)
    const answer = error instanceof ApiError ? error : internalError()
    return c.json(answer.body(), answer.status as ContentfulStatusCode, answer.headers)
  })
  app.notFound((c) => {
    const answer = notFound()
    return c.json(answer.body(), 404)
  })

  // First, so that it sees the 404 of a known path with another method.
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        const answer = notAllowed(methods.join(', '))
        return c.json(answer.body(), 405, answer.headers)
      },
    }),
  )
  app.use(setHeaders(COMMON_HEADERS))
  // Before the key check: the deprecated route says so on its 401s too. HEAD is routed as GET.
  app.get('/v1/pets/:petId', setHeaders(DEPRECATION_HEADERS))
  app.use('/v1/*', async (c, next) => {
    authenticate(c.req.header('authorization'))
    await next()
  })

  app.get(
    '/v1/pets',
    validator('query', (query) => parseListQuery((name) => query[name])),
    async (c) => {
      const { page, link } = await listPage(store, c.req.valid('query'))
      return petsJson(c, page, 200, link === undefined ? {} : { link })
    },
  )

  app.post(
    '/v1/pets',
    async (c, next) => {
      requireJson(
        c.req.header('content-type'),
        hasBody(c.req.header('content-length'), c.req.header('transfer-encoding')),
      )
      await next()
    },
    // Hono's documented way to cap a body. It reads `c.req.raw.body`, which makes
    // @hono/node-server build a web stream for the body instead of its fast
    // path (about half the create rate, measured); left in, as users write it.
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw payloadTooLarge()
      },
    }),
    async (c) => {
      const pet = await store.create(parseNewPet(parseJsonBody(new Uint8Array(await c.req.arrayBuffer()))))
      return petsJson(c, pet, 201, { location: petLocation(pet) })
    },
  )

  app.get('/v1/pets/:petId', async (c) => petsJson(c, await findPet(store, c.req.param('petId')), 200))

  const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => announce('hono', info.port))
  exitOnSigterm(() => {
    server.close()
    ;(server as Server).closeAllConnections()
  }, store)
})
