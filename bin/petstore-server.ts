#!/usr/bin/env node
/**
 * The `petstore-server` binary: the API on node:http, with a store chosen by
 * `--db`, a health check, and a graceful shutdown.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { serve } from '../adapters/node.js'
import packageJson from '../package.json' with { type: 'json' }
import { errorResponse } from '../src/errors.js'
import { createPetstore, type FetchHandler, type PetStore, PetstoreError } from '../src/index.js'
import { openStore } from './open-store.js'
import { parseCli, USAGE, UsageError } from './options.js'

/** `GET /healthz`, outside the API and its keys: is the store answering? */
function withHealth(handler: FetchHandler, store: PetStore): FetchHandler {
  return async (request) => {
    if (new URL(request.url).pathname !== '/healthz') return handler(request)
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return errorResponse(new PetstoreError(405, 'method_not_allowed', 'Use GET', { headers: { allow: 'GET, HEAD' } }))
    }
    try {
      await (store.ping?.() ?? store.list({ limit: 1 }))
    } catch (error) {
      return errorResponse(PetstoreError.unavailable(error))
    }
    const body = request.method === 'HEAD' ? null : '{"status":"ok"}'
    return new Response(body, { headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
  }
}

function fail(message: string): never {
  process.stderr.write(`petstore-server: ${message}\n`)
  process.exit(1)
}

/** One line, whatever the driver threw (better-sqlite3 and friends can be verbose). */
const oneLine = (error: unknown) => String((error as Error)?.message ?? error).split('\n', 1)[0] ?? ''

async function main(): Promise<void> {
  let options: ReturnType<typeof parseCli>
  try {
    options = parseCli(process.argv.slice(2), process.env)
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message} (see --help)`)
    throw error
  }
  if (options.help) return void process.stdout.write(`${USAGE}\n`)
  if (options.version) return void process.stdout.write(`${packageJson.version}\n`)

  let store: PetStore
  try {
    store = openStore(options.db)
    // Reach the database now, so that a bad --db fails here and not on the first request.
    await (store.ping?.() ?? store.list({ limit: 1 }))
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message} (see --help)`)
    fail(
      `cannot use database ${options.db.replace(/\/\/[^@/]*@/, '//***@')}: ${oneLine((error as Error)?.cause ?? error)}`,
    )
  }

  let keys = options.keys
  if (keys.length === 0) {
    keys = [randomBytes(24).toString('base64url')]
    process.stderr.write(`petstore-server: no API key configured; this run accepts: ${keys[0]}\n`)
  }
  const handler = createPetstore({
    store,
    keys,
    basePath: options.basePath,
    cors: options.cors.length > 0 ? { origin: options.cors.includes('*') ? '*' : options.cors } : undefined,
  })

  let server: Awaited<ReturnType<typeof serve>>
  try {
    server = await serve({ handler: withHealth(handler, store), port: options.port, hostname: options.host })
  } catch (error) {
    await store.close?.()
    fail(`cannot listen on ${options.host}:${options.port}: ${oneLine(error)}`)
  }
  const host = server.hostname.includes(':') ? `[${server.hostname}]` : server.hostname
  process.stdout.write(`petstore-server listening on http://${host}:${server.port}${options.basePath}\n`)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal means "now": do not wait for slow clients.
      process.stderr.write(`petstore-server: ${signal} again, exiting now\n`)
      process.exit(1)
    }
    stopping = true
    process.stderr.write(`petstore-server: ${signal}, finishing requests in flight\n`)
    await server.close()
    await store.close?.()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

main().catch((error) => fail(oneLine(error)))
