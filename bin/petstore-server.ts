#!/usr/bin/env node
/**
 * The `petstore-server` binary: the API on node:http, with a store chosen by
 * `--db`, a health check, and a graceful shutdown.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { withDocs } from '../adapters/docs.js'
import { serve } from '../adapters/node/index.js'
import packageJson from '../package.json' with { type: 'json' }
import {
  type ApiAnswer,
  errorAnswer,
  jsonAnswer,
  type OnResponse,
  type Route,
  redactedUrl,
  swappable,
  withRoutes,
} from '../src/for-binary.js'
import { createPetstore, memoryStore, type PetStore, PetstoreError, type ResettablePetStore } from '../src/index.js'
import { accessLog, flushAccessLog } from './access-log.js'
import { reloadKeysOnSighup } from './keys-reload.js'
import { aggregatedMetrics, type RequestMetrics, requestMetrics, serveMetrics } from './metrics.js'
import { openStore } from './open-store.js'
import { parseCli, UsageError } from './options.js'
import { quietSqliteWarning } from './quiet-warnings.js'
import { printStatsEvery } from './stats.js'
import { faultWrapper, loadControl, loadSeed, readSeed, SeedError, type SeedFile, seedOfText } from './test-control.js'
import { USAGE } from './usage.js'
import {
  cursorSecretFromPrimary,
  inWorker,
  journalIdsFromPrimary,
  keyFromPrimary,
  runPrimary,
  seedFromPrimary,
  workerReady,
} from './workers.js'

/** `GET /healthz`, outside the API and its keys: is the store answering? */
const healthRoute = (store: PetStore): Route => ({
  method: 'GET',
  path: '/healthz',
  handler: () => health(store),
  open: true,
})

/** The health answer itself: 200 while the store answers, 503 when it does not. */
async function health(store: PetStore): Promise<ApiAnswer> {
  try {
    await (store.ping?.() ?? store.list({ limit: 1 }))
  } catch (error) {
    return errorAnswer(PetstoreError.unavailable(error))
  }
  return jsonAnswer('{"status":"ok"}')
}

/** One hook from two, either of which may be absent. */
function both(first: OnResponse | undefined, second: OnResponse | undefined): OnResponse | undefined {
  if (!first || !second) return first ?? second
  return (info) => {
    first(info)
    second(info)
  }
}

/** The metrics listener, said on stderr: stdout's first line is the ready line. */
async function startMetrics(metrics: Parameters<typeof serveMetrics>[0], port: number, host: string): Promise<void> {
  let bound: number
  try {
    bound = await serveMetrics(metrics, port, host)
  } catch (error) {
    fail(`cannot serve metrics on ${host}:${port}: ${oneLine(error)}`)
  }
  process.stderr.write(
    `petstore-server: metrics on http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics\n`,
  )
}

/** Binds `host:port` and lets it go at once. */
function canListen(port: number, host: string): Promise<void> {
  const probe = createServer()
  return new Promise((resolve, reject) => {
    probe.once('error', reject)
    probe.listen(port, host, () => probe.close(() => resolve()))
  })
}

function fail(message: string): never {
  process.stderr.write(`petstore-server: ${message}\n`)
  process.exit(1)
}

/** How long requests in flight may take to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_TIMEOUT_MS = 10_000
/** SIGTERM to exit, at the latest: the shutdown timeout, then 5 s to close the store. */
const STOP_TIMEOUT_MS = SHUTDOWN_TIMEOUT_MS + 5_000

/** What to look at, where a driver's message says what failed but not why. */
function databaseHint(error: unknown, db: string): string {
  // The default database, on a Node without SQLite: the way to try the server without installing anything.
  if (error instanceof PetstoreError && error.options.missingDriver) {
    return db.startsWith('sqlite:') ? '; or, to try it out, --db memory' : ''
  }
  const { code } = (error ?? {}) as { code?: unknown }
  if (code === 'ECONNREFUSED') return ' (is the database server running, and listening there?)'
  if (code === 'SQLITE_CANTOPEN') return ' (can this user create and write files in its directory?)'
  return ''
}

/** One line, whatever the driver threw (better-sqlite3 and friends can be verbose). */
const oneLine = (error: unknown) => String((error as Error)?.message ?? error).split('\n', 1)[0] ?? ''

async function main(): Promise<void> {
  quietSqliteWarning()
  let options: ReturnType<typeof parseCli>
  try {
    options = parseCli(process.argv.slice(2), process.env)
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message} (see --help)`)
    throw error
  }
  if (options.help) return void process.stdout.write(`${USAGE}\n`)
  if (options.version) return void process.stdout.write(`${packageJson.version}\n`)

  let store: ResettablePetStore
  try {
    store = await openStore(options.db, options.dbFrom)
    // Reach the database now, so that a bad --db fails here and not on the first request.
    await (store.ping?.() ?? store.list({ limit: 1 }))
  } catch (error) {
    if (error instanceof UsageError) fail(`${error.message} (see --help)`)
    const missingDriver = error instanceof PetstoreError && error.options.missingDriver
    if (missingDriver && options.dbIsDefault && options.workers === 1) {
      // The default on a Node without SQLite (20, 22 before 22.13): `npx petstore-server` still
      // serves, so that trying it needs no native addon. A --db the user chose still fails.
      process.stderr.write(
        `petstore-server: ${process.version} has no built-in SQLite and better-sqlite3 is not installed: pets are kept in memory and lost at exit (npm install better-sqlite3, or Node >= 22.13, keeps them in ./petstore.db)\n`,
      )
      store = memoryStore()
    } else {
      // A missing driver: the store's own message names the package to install; otherwise the cause tells more.
      const reason = missingDriver ? error : ((error as Error)?.cause ?? error)
      fail(`cannot use database ${redactedUrl(options.db)}: ${oneLine(reason)}${databaseHint(reason, options.db)}`)
    }
  }

  let seed: SeedFile | undefined
  if (options.seed !== undefined) {
    try {
      // Under --workers the primary reads the file and loads it before any worker starts; a worker
      // gets the primary's text, and only remembers it.
      seed = inWorker
        ? seedOfText(`${options.seed.from} ${options.seed.path}`, await seedFromPrimary())
        : readSeed(options.seed)
      await loadSeed(store, seed, inWorker)
    } catch (error) {
      await store.close?.()
      fail(error instanceof SeedError ? error.message : `cannot load ${options.seed.from}: ${oneLine(error)}`)
    }
  }
  let keys = options.keys
  if (keys.length === 0) {
    const shared = keyFromPrimary()
    keys = [shared ?? randomBytes(24).toString('base64url')]
    if (!shared) process.stderr.write(`petstore-server: no API key configured; this run accepts: ${keys[0]}\n`)
  }
  // Workers must sign cursors alike: one accepts what another issued.
  const cursorSecret = cursorSecretFromPrimary() ?? options.cursorSecret ?? randomBytes(32).toString('base64url')
  if (options.workers > 1 && !inWorker) {
    // Everything is checked: the workers serve, this process watches them (bin/workers.ts).
    await store.close?.()
    // Each worker would say so if the address cannot be bound: bound once here first, for one line.
    await canListen(options.port, options.host).catch((error) =>
      fail(`cannot listen on ${options.host}:${options.port}: ${oneLine(error)}`),
    )
    if (options.metricsPort !== undefined)
      await startMetrics(await aggregatedMetrics(), options.metricsPort, options.metricsHost)
    if (options.testControl) await (await import('./cluster-journal.js')).gatherJournals()
    return runPrimary(options.workers, options.keys.length === 0 ? keys[0] : undefined, cursorSecret, {
      reloadsKeys: options.keysFile !== undefined,
      seed: seed?.text,
    })
  }
  // Each worker draws its own faults: see docs/testing-clients.md on what order means then.
  const faulty = await faultWrapper(options)
  let metrics: RequestMetrics | undefined
  try {
    if (options.metricsPort !== undefined) metrics = await requestMetrics(store, inWorker)
  } catch (error) {
    await store.close?.()
    fail(oneLine(error))
  }
  const onResponse = both(accessLog(options.log, options.logLevel), metrics?.onResponse)
  const control = options.testControl ? await loadControl(options, journalIdsFromPrimary()) : undefined
  const handlerWith = (keys: readonly string[]) => {
    /** The API over `store` under `prefix` (`/ns/{name}` for a namespace), with its faults and test control. */
    const apiOf = (store: ResettablePetStore, prefix: string, name = '') => {
      const api = createPetstore({
        store,
        keys,
        basePath: `${prefix}${options.basePath}` || '/',
        servers: options.publicUrls.length > 0 ? options.publicUrls : undefined,
        cursorSecret,
        idempotencyTtl: options.idempotencyTtlMs,
        cors: options.cors.length > 0 ? { origin: options.cors.includes('*') ? '*' : options.cors } : undefined,
        onResponse,
      })
      // The reference page's files are read on its first request, not here: the start does not pay for them.
      const served = options.docs ? withDocs(api) : api
      const faultsIn = faulty ? faulty(served, name || undefined) : served
      return control ? control.around(faultsIn, store, prefix, name) : faultsIn
    }
    const handler = withRoutes(apiOf(store, ''), [healthRoute(store)])
    if (control === undefined) return handler
    return control.namespaced(handler, store, apiOf, options.maxNamespaces)
  }
  // Key rotation swaps the handler: a request in flight finishes on the one it started on, under the old keys.
  const served = swappable(handlerWith(keys))
  reloadKeysOnSighup(options, (fresh) => served.swap(handlerWith(fresh)))

  let server: Awaited<ReturnType<typeof serve>>
  try {
    // serve()'s other defaults (header and request timeouts, connection cap) are meant for this binary.
    server = await serve({
      handler: served.handler,
      port: options.port,
      hostname: options.host,
      shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
      maxConnections: options.maxConnections,
      maxConnectionsPerAddress: options.maxConnectionsPerAddress,
      firstRequestTimeoutMs: options.firstRequestTimeoutMs,
      // Node's own answers (408, 431, 400s) are logged and counted like the API's.
      onResponse,
    })
  } catch (error) {
    await store.close?.()
    fail(`cannot listen on ${options.host}:${options.port}: ${oneLine(error)}`)
  }
  if (metrics) {
    metrics.watch(server.server)
    // Under --workers the primary serves the workers' metrics summed; a worker only counts.
    if (!inWorker) await startMetrics(metrics, options.metricsPort ?? 0, options.metricsHost)
  }
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      // A worker gets Ctrl-C's SIGINT and the primary's forwarded one: the primary decides what "now" is.
      if (inWorker) return
      // A second signal means "now": do not wait for slow clients.
      process.stderr.write(`petstore-server: ${signal} again, exiting now\n`)
      process.exit(1)
    }
    stopping = true
    // close() shuts the listener before it returns; said after it, the line means no new connection
    // gets in (said first, a client that read it could still connect in between: seen in CI).
    const closed = server.close()
    process.stderr.write(`petstore-server: ${signal}, finishing requests in flight\n`)
    // server.close() cuts connections still open after SHUTDOWN_TIMEOUT_MS; this bounds the rest (a store that hangs).
    setTimeout(() => {
      process.stderr.write(`petstore-server: not stopped within ${STOP_TIMEOUT_MS / 1000} s of ${signal}, exiting\n`)
      process.exit(1)
    }, STOP_TIMEOUT_MS).unref()
    await closed
    try {
      await store.close?.()
    } catch (error) {
      fail(`could not close the store: ${oneLine(error)}`)
    }
    // The access log's last lines may still be on their way to stdout (bin/log-writer.ts).
    await flushAccessLog()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
  // Without a keys file to re-read, a hang-up (the terminal closed) stops the server like SIGTERM:
  // left running, it would hold its port with nowhere to write its log.
  if (options.keysFile === undefined) process.on('SIGHUP', () => void stop('SIGHUP'))

  // Said once the signals are handled: a supervisor that reads the line and at once sends SIGTERM
  // gets a graceful stop, not the default death (seen: 1 start in 6 with the line said first).
  const host = server.hostname.includes(':') ? `[${server.hostname}]` : server.hostname
  const ready = `petstore-server listening on http://${host}:${server.port}${options.basePath}`
  if (inWorker) workerReady(ready, server.server)
  else process.stdout.write(`${ready}\n`)
  // A diagnostic for soak runs (bench/soak.ts): undocumented in --help on purpose, described in the README.
  if (options.statsIntervalMs !== undefined) printStatsEvery(options.statsIntervalMs)
}

main().catch((error) => fail(oneLine(error)))
