// Scale benchmark over HTTP: does the built binary answer as fast with 1,000,000 pets as with
// 10,000? The HTTP half of issue 6's target (bench/scale.ts is the in-process half).
//
//   npx tsx bench/scale-http.ts [--sizes 10000,1000000] [--only memory,sqlite,postgres]
//                               [--duration 5] [--rounds 2] [--json]
//
// Per store and size, one `node dist/bin/petstore-server.js --port 0 --key K --db …` on CPU 0
// (taskset), autocannon in this process on CPU 1, 50 connections, the cases:
//   list      GET /pets?limit=20
//   filtered  GET /pets?status=sold&limit=100
//   deep      GET /pets?limit=20&cursor=<the cursor after id N - 100> (a page deep in the table)
//   get       GET /pets/<a random id in 1..N, a new one each request>
// Each case is checked first (200, the right number of pets, the right ids or status), then
// measured `--duration` s per size in each of `--rounds` rounds (1 s of warm-up in the first),
// the sizes taking turns so that a change of load on the machine touches every size alike.
// Latencies are every 2xx response's own time (autocannon's `response` event, µs resolution:
// its summary rounds to whole ms), pooled over the rounds; ratio: p99 of the largest size over
// the smallest, marked ✗ above 1.5.
//
// Seeding, statuses available, pending, sold and none in turn: SQLite in one SQL statement into a
// file in a temp dir whose table the store's own Migrator made (in this process, as bench/scale.ts
// does); PostgreSQL (PETSTORE_BENCH_POSTGRES_URL, else PETSTORE_TEST_POSTGRES_URL, else skipped)
// with generate_series and ANALYZE in a fresh schema petstore_scale_http_<random> per size,
// dropped at the end, on error and on Ctrl-C; memory over HTTP only (the binary has no other
// way in), by autocannon POSTs on 64 connections, timed and reported.
//
// The database server is not pinned: on this machine it competes with the binary and autocannon.
// A measurement, not a test: on a shared machine numbers move; compare ratios.
import { randomBytes } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon, { type Options as AutocannonOptions, type Result } from 'autocannon'
import { seedPostgres, seedSqlite } from './bulk-seed.js'
import { Cleanups } from './cleanups.js'
import { encodeCursor } from './cursor.js'
import { pinCpus } from './pinning.js'
import { random } from './random.js'
import { type ServerProcess, startServer } from './server-process.js'
import { wholeNumber } from './whole-number.js'

const STORES = ['memory', 'sqlite', 'postgres'] as const
type StoreName = (typeof STORES)[number]
const CASES = ['list', 'filtered', 'deep', 'get'] as const
type CaseName = (typeof CASES)[number]
const RATIO_TARGET = 1.5
const CONNECTIONS = 50
const SEED_CONNECTIONS = 64
const WARMUP_SECONDS = 1
const KEY = 'scale-http-key'
const AUTH = { authorization: `Bearer ${KEY}` }
const STATUSES = [undefined, 'available', 'pending', 'sold'] as const
/** The servers started inherit it, so that the deep case can send a cursor they accept. */
const CURSOR_SECRET = process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')
process.env.PETSTORE_CURSOR_SECRET = CURSOR_SECRET
const POSTGRES_URL = process.env.PETSTORE_BENCH_POSTGRES_URL || process.env.PETSTORE_TEST_POSTGRES_URL
const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
const BINARY = 'dist/bin/petstore-server.js'

const log = (line: string) => process.stderr.write(`${line}\n`)
const redact = (url: string) => url.replace(/\/\/[^@/]*@/g, '//***@')
const formatSize = (size: number) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size))
const formatMs = (ms: number) => (ms >= 10 ? ms.toFixed(1) : ms.toFixed(2))

/** Undo steps: servers, schemas, the temp dir; run after each store, at the end, on error, on Ctrl-C. */
const cleanups = new Cleanups(log)

// ——— databases ———

/** A SQLite file of `size` pets: the table made by the store's Migrator, then one INSERT … SELECT. */
async function sqliteFile(dir: string, size: number): Promise<string> {
  const { sqliteStore } = await import('../src/store/sql/sqlite.js')
  const path = join(dir, `scale-${size}.db`)
  const store = sqliteStore({ path })
  await store.ping?.()
  await store.close?.()
  await seedSqlite(path, size)
  return `sqlite:${path}`
}

/** A fresh PostgreSQL schema of `size` pets (table by the store's Migrator), dropped by a cleanup step. */
async function postgresSchema(size: number): Promise<string> {
  const { default: pg } = await import('pg')
  const { postgresStore } = await import('../src/store/sql/postgres.js')
  const base = new URL(POSTGRES_URL ?? '')
  base.searchParams.delete('schema')
  const schema = `petstore_scale_http_${randomBytes(4).toString('hex')}`
  const admin = async (statement: string, values: unknown[] = []): Promise<void> => {
    const client = new pg.Client({ connectionString: base.href, connectionTimeoutMillis: 5_000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query(statement, values)
    } finally {
      await client.end().catch(() => {})
    }
  }
  // Registered before the schema exists, so a Ctrl-C in between still drops it; runs after the server stops.
  cleanups.push(async () => {
    await admin(`drop schema if exists "${schema}" cascade`)
    log(`[postgres] dropped schema ${schema}`)
  })
  const store = postgresStore({ connectionString: base.href }, { schema })
  await store.ping?.()
  await store.close?.()
  await seedPostgres(admin, schema, size)
  const url = new URL(base.href)
  url.searchParams.set('schema', schema)
  return url.href
}

/** Creates `size` pets in a memory server over HTTP, POSTs on SEED_CONNECTIONS connections. */
async function seedOverHttp(baseUrl: string, size: number): Promise<void> {
  const bodies = Array.from({ length: 4 }, (_, i) => {
    const status = STATUSES[i]
    return JSON.stringify({ name: 'pet', categoryId: 1, ...(status === undefined ? {} : { status }) })
  })
  let next = 0
  const options = {
    url: `${baseUrl}/pets`,
    connections: Math.min(SEED_CONNECTIONS, size),
    amount: size,
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: bodies[0],
    requests: [{ setupRequest: (request: object) => ({ ...request, body: bodies[++next % 4] }) }],
  }
  const result = await autocannon(options as AutocannonOptions)
  const created = result.statusCodeStats['201']?.count ?? 0
  if (created !== size || result.errors > 0) {
    throw new Error(`seeding over HTTP: ${created} of ${size} created, ${result.errors} errors`)
  }
}

// ——— cases ———

interface Case {
  path: string
  /** A new path per request (get: a random id), else undefined. */
  pathPerRequest?: () => string
  /** Describes what is wrong with an answer, if anything. */
  check(status: number, body: unknown): string | undefined
}

function page(expected: number, body: unknown, each: (pet: { id: number; status?: string }, i: number) => boolean) {
  if (!Array.isArray(body)) return 'not a JSON array'
  if (body.length !== expected) return `${body.length} pets, not ${expected}`
  return body.every(each) ? undefined : `unexpected pets: ${JSON.stringify(body.slice(0, 3))}…`
}

function casesFor(size: number): Record<CaseName, Case> {
  const next = random(42)
  const randomId = () => 1 + Math.floor(next() * size)
  const after = size - 100
  return {
    list: { path: '/pets?limit=20', check: (_, body) => page(20, body, (pet, i) => pet.id === i + 1) },
    filtered: {
      path: '/pets?status=sold&limit=100',
      check: (_, body) => page(100, body, (pet) => pet.status === 'sold'),
    },
    deep: {
      path: `/pets?limit=20&cursor=${encodeCursor(after, undefined, CURSOR_SECRET)}`,
      check: (_, body) => page(20, body, (pet, i) => pet.id === after + 1 + i),
    },
    get: {
      path: '/pets/1',
      pathPerRequest: () => `/pets/${randomId()}`,
      check: (_, body) => (typeof (body as { id?: unknown })?.id === 'number' ? undefined : 'no pet'),
    },
  }
}

/** Sends the case's request (a few times for `get`) and throws if any answer is wrong. */
async function verify(baseUrl: string, name: CaseName, spec: Case): Promise<void> {
  const paths = spec.pathPerRequest ? Array.from({ length: 20 }, spec.pathPerRequest) : [spec.path]
  for (const path of paths) {
    const response = await fetch(`${baseUrl}${path}`, { headers: AUTH })
    const body: unknown = await response.json().catch(() => undefined)
    const problem =
      response.status !== 200
        ? `status ${response.status}`
        : name === 'get' && (body as { id?: unknown })?.id !== Number(path.split('/').pop())
          ? `asked ${path}, got ${JSON.stringify(body)}`
          : spec.check(response.status, body)
    if (problem !== undefined) throw new Error(`${name} ${path}: ${problem}`)
  }
}

interface Sample {
  latencies: number[]
  requests: number
  seconds: number
  unexpected: number
  errors: number
  loadgenCpu: number
}

/** One autocannon run; every response's latency in ms (float), from its `response` event. */
async function load(baseUrl: string, spec: Case, seconds: number): Promise<Sample> {
  const latencies: number[] = []
  let unexpected = 0
  const perRequest = spec.pathPerRequest
  const options = {
    url: `${baseUrl}${spec.path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: AUTH,
    ...(perRequest
      ? { requests: [{ setupRequest: (request: object) => ({ ...request, path: `/v1${perRequest()}` }) }] }
      : {}),
  }
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const run = autocannon(options as AutocannonOptions) as Promise<Result> & EventEmitter
  run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200) latencies.push(ms)
    else unexpected++
  })
  const result = await run
  const cpu = process.cpuUsage(cpuBefore)
  const wallMs = performance.now() - started
  return {
    latencies,
    requests: latencies.length,
    seconds: result.duration,
    unexpected,
    errors: result.errors,
    loadgenCpu: (cpu.user + cpu.system) / 1000 / wallMs,
  }
}

interface Stats {
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  loadgenCpu: number
  unexpected: number
  errors: number
}

function stats(samples: Sample[]): Stats {
  const all = Float64Array.from(samples.flatMap((sample) => sample.latencies)).sort()
  const at = (q: number) => all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? Number.NaN
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0)
  return {
    reqPerSec: all.length / seconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    loadgenCpu: Math.max(...samples.map((sample) => sample.loadgenCpu)),
    unexpected: samples.reduce((sum, sample) => sum + sample.unexpected, 0),
    errors: samples.reduce((sum, sample) => sum + sample.errors, 0),
  }
}

// ——— one store ———

interface StoreResult {
  store: StoreName
  /** Seconds to fill each size (memory: over HTTP). */
  seedSeconds: Record<number, number>
  cases: Record<CaseName, Record<number, Stats> & { ratio: number }>
}

async function benchStore(
  store: StoreName,
  sizes: number[],
  options: { duration: number; rounds: number; dir: string; serverPrefix: string[] },
): Promise<StoreResult> {
  const servers = new Map<number, ServerProcess>()
  const seedSeconds: Record<number, number> = {}
  const cleanupsBefore = cleanups.size
  try {
    for (const size of sizes) {
      log(`[${store}] ${size.toLocaleString('en')} pets…`)
      const started = performance.now()
      const db =
        store === 'memory'
          ? 'memory'
          : store === 'sqlite'
            ? await sqliteFile(options.dir, size)
            : await postgresSchema(size)
      const command = [...options.serverPrefix, process.execPath, BINARY, '--port', '0', '--key', KEY, '--db', db]
      const server = await startServer(`${store} ${formatSize(size)}`, command, ROOT)
      cleanups.push(() => server.stop())
      servers.set(size, server)
      if (store === 'memory') await seedOverHttp(server.baseUrl, size)
      seedSeconds[size] = (performance.now() - started) / 1000
      log(`[${store}] ${formatSize(size)} ready in ${seedSeconds[size].toFixed(1)} s (${redact(db)})`)
      const cases = casesFor(size)
      for (const name of CASES) await verify(server.baseUrl, name, cases[name])
    }
    const samples = new Map<string, Sample[]>()
    const cases = new Map(sizes.map((size) => [size, casesFor(size)]))
    for (let round = 0; round < options.rounds; round++) {
      for (const [index, name] of CASES.entries()) {
        // The order of the sizes turns from round to round and case to case.
        const by = (round + index) % sizes.length
        for (const size of [...sizes.slice(by), ...sizes.slice(0, by)]) {
          const { baseUrl } = servers.get(size)!
          const spec = cases.get(size)![name]
          if (round === 0) await load(baseUrl, spec, WARMUP_SECONDS)
          const sample = await load(baseUrl, spec, options.duration)
          const key = `${name} ${size}`
          samples.set(key, [...(samples.get(key) ?? []), sample])
          const p = stats([sample])
          log(
            `[${store}] round ${round + 1} ${name.padEnd(8)} ${formatSize(size).padStart(5)}: ` +
              `${p.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${formatMs(p.p50Ms)} ms  p99 ${formatMs(p.p99Ms)} ms  ` +
              `loadgen CPU ${(p.loadgenCpu * 100).toFixed(0)}%`,
          )
        }
      }
    }
    const result = {} as StoreResult['cases']
    for (const name of CASES) {
      const bySize: Record<number, Stats> = {}
      for (const size of sizes) bySize[size] = stats(samples.get(`${name} ${size}`)!)
      result[name] = Object.assign(bySize, { ratio: bySize[sizes.at(-1)!]!.p99Ms / bySize[sizes[0]!]!.p99Ms })
    }
    return { store, seedSeconds, cases: result }
  } finally {
    // This store's servers and schemas only; the temp dir goes at the very end.
    await cleanups.run(cleanupsBefore)
  }
}

function table(results: StoreResult[], sizes: number[]): string {
  const header = ['store', 'case']
  for (const size of sizes) header.push(`${formatSize(size)} req/s`, `p50 ms`, `p99 ms`)
  header.push(`p99 ${formatSize(sizes.at(-1)!)}/${formatSize(sizes[0]!)}`)
  const rows = [header]
  const notes: string[] = []
  for (const result of results) {
    for (const name of CASES) {
      const row: string[] = [result.store, name]
      for (const size of sizes) {
        const each = result.cases[name][size]!
        const busy = each.loadgenCpu >= 0.9 ? '!' : ''
        row.push(
          `${Math.round(each.reqPerSec).toLocaleString('en')}${busy}`,
          formatMs(each.p50Ms),
          formatMs(each.p99Ms),
        )
        if (each.unexpected > 0 || each.errors > 0) {
          notes.push(
            `${result.store} ${name} ${formatSize(size)}: ${each.unexpected} answers not 200, ${each.errors} errors`,
          )
        }
      }
      const ratio = result.cases[name].ratio
      row.push(`${ratio.toFixed(2)}${ratio > RATIO_TARGET ? ' ✗' : ''}`)
      rows.push(row)
    }
  }
  const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  const lines = rows.map((row) => row.map((cell, column) => cell.padStart(widths[column]!)).join('  '))
  return [...lines, ...notes].join('\n')
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,1000000' },
      only: { type: 'string', default: STORES.join(',') },
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '2' },
      json: { type: 'boolean', default: false },
    },
  })
  const sizes = values.sizes
    .split(',')
    .map(Number)
    .sort((a, b) => a - b)
  if (sizes.length < 2 || sizes.some((size) => !Number.isSafeInteger(size) || size < 200)) {
    throw new Error('--sizes takes two or more sizes of at least 200 pets (the deep page starts after id N - 100)')
  }
  const only = values.only.split(',') as StoreName[]
  for (const name of only) if (!STORES.includes(name)) throw new Error(`--only: unknown store ${name}`)
  const duration = wholeNumber('--duration', values.duration)
  const rounds = wholeNumber('--rounds', values.rounds)
  if (!existsSync(join(ROOT, BINARY))) throw new Error(`no ${BINARY}: npm run build first`)

  cleanups.runOnSignals((signal) => log(`${signal}: cleaning up`))
  const dir = mkdtempSync(join(tmpdir(), 'petstore-scale-http-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const pinning = pinCpus()
  log(`cpus: ${pinning.how}`)

  const results: StoreResult[] = []
  const notes: string[] = []
  try {
    for (const store of only) {
      if (store === 'postgres' && !POSTGRES_URL) {
        notes.push('postgres skipped: set PETSTORE_BENCH_POSTGRES_URL (or PETSTORE_TEST_POSTGRES_URL)')
        continue
      }
      results.push(await benchStore(store, sizes, { duration, rounds, dir, serverPrefix: pinning.serverPrefix }))
    }
  } finally {
    await cleanups.run()
  }

  if (values.json) {
    const config = { sizes, duration, rounds, connections: CONNECTIONS, cpus: pinning.how, node: process.version }
    process.stdout.write(`${JSON.stringify({ config, results, notes }, null, 2)}\n`)
    return
  }
  const lines = [
    `${BINARY} over HTTP, ${CONNECTIONS} connections, ${rounds} round(s) of ${duration} s per case and size ` +
      `(${WARMUP_SECONDS} s warm-up first), Node ${process.versions.node}, ${pinning.how}.`,
    'p50, p99: of every 200 response, pooled over the rounds; get: a random id per request; deep: after id N - 100.',
    '',
    table(results, sizes),
    '',
    ...results.map(
      (result) =>
        `${result.store}: ready in ${sizes.map((size) => `${formatSize(size)} ${result.seedSeconds[size]!.toFixed(1)} s`).join(', ')}` +
        (result.store === 'memory' ? ` (pets created over HTTP, ${SEED_CONNECTIONS} connections)` : ''),
    ),
    ...notes,
    `✗: p99 more than ${RATIO_TARGET}× that of ${formatSize(sizes[0]!)} pets; !: autocannon used 90% or more of its CPU.`,
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}

main().catch(async (error: unknown) => {
  log(`scale-http: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  await cleanups.run()
  process.exit(1)
})
