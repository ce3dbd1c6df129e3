// Scale benchmark of the stores, in process (no HTTP): does a store answer as
// fast with 1,000,000 pets as with 10,000?
//
//   npx tsx bench/scale.ts [--sizes 10000,1000000] [--only memory,sqlite,postgres]
//                          [--seconds 2] [--rounds 20] [--no-rss] [--json]
//
// Cases, each timed one call after the other (no concurrency), per store and size:
//   list      the first page, limit 20
//   filtered  status=sold, limit 100, first page
//   deep      limit 20 after a random id among the last 1,000 (a page deep in the table, by the cursor)
//   get       a random id, and the pet as the handler writes it (petJson)
// A page is what the handler sends: the store's page as JSON text where it writes one
// (the store's page(), written by SQLite and PostgreSQL themselves), as the handler sends it.
// Each table prints p50 and p99 in µs and ops/s, and the p99 ratio of the largest size to the
// smallest, marked ✗ above 1.5 (the target of issue 6).
//
// Every store of every size lives in a child process of its own, so a large heap's garbage
// collection is charged to its own size; the children take turns, in rounds, so that a change of
// load on the machine touches every size alike. Pets: statuses available, pending, sold and none
// in turn, names `pet <i>`. SQLite is seeded in one SQL statement from a second connection, in a
// temp dir; PostgreSQL (PETSTORE_BENCH_POSTGRES_URL, else PETSTORE_TEST_POSTGRES_URL, else
// skipped) with generate_series in a fresh schema petstore_scale_<random> per size, dropped at
// the end, on error and on Ctrl-C.
//
// Then (unless --no-rss) the resident memory of a plain `node` process (no tsx) holding a
// memoryStore of the largest size, its pets added by create() (target: ≤ 250 MB at 1,000,000).
//
// A measurement, not a test: on a shared machine numbers move; compare ratios, not µs.
import { type ChildProcess, execFileSync, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { petJson } from '../src/api/pet-json.js'
import type { NewPet, PetStatus } from '../src/api/schemas.js'
import { memoryStore } from '../src/index.js'
import { storeOf } from '../src/store/checked-store.js'
import type { ListQuery, PetStore } from '../src/store/store.js'
import { seedPostgres, seedSqlite } from './bulk-seed.js'
import { Cleanups } from './cleanups.js'
import { random } from './random.js'

const STORES = ['memory', 'sqlite', 'postgres'] as const
type StoreName = (typeof STORES)[number]
const CASES = ['list', 'filtered', 'deep', 'get'] as const
type CaseName = (typeof CASES)[number]
const RATIO_TARGET = 1.5
const RSS_TARGET_MB = 250
const STATUSES: ReadonlyArray<PetStatus | undefined> = [undefined, 'available', 'pending', 'sold']
const POSTGRES_URL = process.env.PETSTORE_BENCH_POSTGRES_URL || process.env.PETSTORE_TEST_POSTGRES_URL
const SELF = fileURLToPath(import.meta.url)
const ROOT = resolve(SELF, '../..')

/** What the parent asks of a child, and what the child answers. */
type Request =
  | { type: 'open'; store: StoreName; size: number; dir: string; url?: string; schema?: string }
  | { type: 'run'; case: CaseName; ms: number; warmupMs: number }
  | { type: 'close' }
type Answer =
  | { type: 'ready'; seedMs: number; rssMb: number }
  | { type: 'result'; latencies: Float64Array; elapsedMs: number }
  | { type: 'closed' }
  | { type: 'error'; message: string }

const log = (line: string) => process.stderr.write(`${line}\n`)

// ——— child: one store of one size ———

/** The page as the handler sends it: the store's own page as JSON text. */
function pageOf(store: PetStore): (query: ListQuery) => Promise<string> {
  const own = storeOf(store)
  return async (query) => (await own.page(query)).json
}

function operation(store: PetStore, size: number, name: CaseName, next: () => number): () => Promise<unknown> {
  const page = pageOf(store)
  switch (name) {
    case 'list':
      return () => page({ limit: 20 })
    case 'filtered':
      return () => page({ status: 'sold', limit: 100 })
    case 'deep':
      return () => page({ limit: 20, after: size - 20 - Math.floor(next() * 1000) })
    case 'get':
      return async () => {
        const pet = await store.get(1 + Math.floor(next() * size))
        if (pet === undefined) throw new Error('get: a seeded id is missing')
        return petJson(pet)
      }
  }
}

async function openStore(request: Extract<Request, { type: 'open' }>): Promise<PetStore> {
  const { store, size } = request
  if (store === 'memory') {
    const pets: NewPet[] = []
    for (let i = 1; i <= size; i++) {
      const status = STATUSES[i % 4]
      pets.push(
        status === undefined ? { name: `pet ${i}`, categoryId: i } : { name: `pet ${i}`, categoryId: i, status },
      )
    }
    return memoryStore({ pets })
  }
  if (store === 'sqlite') {
    const { sqliteStore } = await import('../src/store/sql/sqlite.js')
    const path = join(request.dir, `scale-${size}.db`)
    const sqlite = sqliteStore({ path })
    await sqlite.ping?.()
    await seedSqlite(path, size)
    return sqlite
  }
  const { postgresStore } = await import('../src/store/sql/postgres.js')
  const { default: pg } = await import('pg')
  const { url = '', schema } = request
  const postgres = postgresStore({ connectionString: url }, { schema })
  await postgres.ping?.()
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await seedPostgres((statement, values) => admin.query(statement, values), schema ?? '', size)
  } finally {
    await admin.end()
  }
  return postgres
}

async function child(): Promise<void> {
  let store: PetStore | undefined
  let size = 0
  const next = random(42)
  const send = (answer: Answer, then: () => void = () => {}) => process.send?.(answer, then)
  process.on('message', async (request: Request) => {
    try {
      if (request.type === 'open') {
        const started = performance.now()
        size = request.size
        store = await openStore(request)
        globalThis.gc?.()
        send({ type: 'ready', seedMs: performance.now() - started, rssMb: process.memoryUsage().rss / 2 ** 20 })
      } else if (request.type === 'run') {
        const run = operation(store!, size, request.case, next)
        for (const until = performance.now() + request.warmupMs; performance.now() < until; ) await run()
        const latencies: number[] = []
        const started = performance.now()
        const until = started + request.ms
        for (let now = started; now < until; ) {
          await run()
          const done = performance.now()
          latencies.push((done - now) * 1000)
          now = done
        }
        send({ type: 'result', latencies: Float64Array.from(latencies), elapsedMs: performance.now() - started })
      } else {
        await store?.close?.()
        send({ type: 'closed' }, () => process.exit(0))
      }
    } catch (error) {
      send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
    }
  })
}

// ——— parent ———

/** A child process and a way to ask it one thing at a time. */
class Worker {
  private readonly process: ChildProcess
  constructor(readonly label: string) {
    // --expose-gc: the child collects after seeding, so what it allocated for that is not charged to the runs.
    this.process = fork(SELF, ['--child'], {
      execArgv: [...process.execArgv, '--expose-gc'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
  }
  ask(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${this.label}: the child exited (${code})`))
      this.process.once('exit', onExit)
      this.process.once('message', (answer: Answer) => {
        this.process.off('exit', onExit)
        if (answer.type === 'error') reject(new Error(`${this.label}: ${answer.message}`))
        else resolve(answer)
      })
      // With a callback, a child already gone (Ctrl-C reaches the whole process group) rejects this
      // ask instead of emitting an 'error' nobody hears, which would end the run before its cleanup.
      this.process.send(request, (error) => {
        if (error) reject(new Error(`${this.label}: the child is gone (${error.message})`))
      })
    })
  }
  kill(): void {
    this.process.kill()
  }
}

interface Stats {
  p50: number
  p99: number
  opsPerSecond: number
  count: number
}

function stats(samples: Float64Array[], elapsedMs: number): Stats {
  const all = new Float64Array(samples.reduce((sum, each) => sum + each.length, 0))
  let offset = 0
  for (const each of samples) {
    all.set(each, offset)
    offset += each.length
  }
  all.sort()
  const at = (q: number) => all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? Number.NaN
  return { p50: at(0.5), p99: at(0.99), opsPerSecond: (all.length / elapsedMs) * 1000, count: all.length }
}

const formatUs = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(us < 10 ? 2 : 1)} µs`)
const formatSize = (size: number) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size))

interface StoreResult {
  store: StoreName
  seed: Record<number, { seconds: number; rssMb: number }>
  cases: Record<CaseName, Record<number, Stats> & { ratio: number }>
}

async function benchStore(
  store: StoreName,
  sizes: number[],
  options: { seconds: number; rounds: number; dir: string; cleanups: Cleanups },
): Promise<StoreResult> {
  const workers = new Map<number, Worker>()
  const seed: StoreResult['seed'] = {}
  try {
    for (const size of sizes) {
      const worker = new Worker(`${store} ${formatSize(size)}`)
      workers.set(size, worker)
      let schema: string | undefined
      if (store === 'postgres') {
        schema = `petstore_scale_${randomBytes(4).toString('hex')}`
        options.cleanups.push(() => dropSchema(schema!))
      }
      log(`[${store}] seeding ${size.toLocaleString('en')} pets…`)
      const ready = (await worker.ask({ type: 'open', store, size, dir: options.dir, url: POSTGRES_URL, schema })) as
        | Extract<Answer, { type: 'ready' }>
        | undefined
      seed[size] = { seconds: (ready?.seedMs ?? 0) / 1000, rssMb: ready?.rssMb ?? 0 }
      log(`[${store}] ${formatSize(size)} ready in ${seed[size].seconds.toFixed(1)} s`)
    }
    const cases = {} as StoreResult['cases']
    const sliceMs = (options.seconds * 1000) / options.rounds
    for (const name of CASES) {
      const samples = new Map<number, Float64Array[]>(sizes.map((size) => [size, []]))
      const elapsed = new Map<number, number>(sizes.map((size) => [size, 0]))
      for (let round = 0; round < options.rounds; round++) {
        for (const size of sizes) {
          const answer = (await workers
            .get(size)!
            .ask({ type: 'run', case: name, ms: sliceMs, warmupMs: round === 0 ? 200 : 20 })) as Extract<
            Answer,
            { type: 'result' }
          >
          samples.get(size)!.push(answer.latencies)
          elapsed.set(size, elapsed.get(size)! + answer.elapsedMs)
        }
      }
      const bySize: Record<number, Stats> = {}
      for (const size of sizes) bySize[size] = stats(samples.get(size)!, elapsed.get(size)!)
      const smallest = bySize[sizes[0]!]!
      const largest = bySize[sizes.at(-1)!]!
      cases[name] = Object.assign(bySize, { ratio: largest.p99 / smallest.p99 })
      log(`[${store}] ${name}: p99 ratio ${cases[name].ratio.toFixed(2)}`)
    }
    return { store, seed, cases }
  } finally {
    await Promise.all([...workers.values()].map((worker) => worker.ask({ type: 'close' }).catch(() => worker.kill())))
  }
}

async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg')
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  admin.on('error', () => {})
  await admin.connect()
  try {
    await admin.query(`drop schema if exists "${schema}" cascade`)
    log(`[postgres] dropped schema ${schema}`)
  } finally {
    await admin.end()
  }
}

/**
 * RSS of a plain node process (no tsx: its loader costs memory of its own) holding a memoryStore
 * of `size` pets, added one create() at a time as a server would. The store's module is bundled
 * from the source with esbuild (tsup's), so the figure is for this checkout, built or not.
 */
async function memoryRss(size: number, dir: string): Promise<{ rssMb: number; heapMb: number; emptyRssMb: number }> {
  const { build } = await import('esbuild')
  const bundle = join(dir, 'memory-store.mjs')
  await build({
    entryPoints: [join(ROOT, 'src/store/memory.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: bundle,
    logLevel: 'error',
  })
  const script = join(dir, 'rss.mjs')
  writeFileSync(
    script,
    `import { memoryStore } from ${JSON.stringify(bundle)}
const size = Number(process.argv[2])
const empty = process.memoryUsage().rss
const store = memoryStore()
const statuses = [undefined, 'available', 'pending', 'sold']
for (let i = 1; i <= size; i++) {
  const status = statuses[i % 4]
  await store.create(status === undefined ? { name: 'pet ' + i, categoryId: i } : { name: 'pet ' + i, categoryId: i, status })
}
globalThis.gc()
const { rss, heapUsed } = process.memoryUsage()
if ((await store.list({ limit: 1, after: size - 1 })).length !== 1) throw new Error('the last pet is missing')
console.log(JSON.stringify({ rssMb: rss / 2 ** 20, heapMb: heapUsed / 2 ** 20, emptyRssMb: empty / 2 ** 20 }))
`,
  )
  const output = execFileSync(process.execPath, ['--expose-gc', script, String(size)], { encoding: 'utf8' })
  return JSON.parse(output.trim().split('\n').pop() ?? '{}')
}

function table(results: StoreResult[], sizes: number[]): string {
  const header = ['store', 'case']
  for (const size of sizes)
    header.push(`${formatSize(size)} p50`, `${formatSize(size)} p99`, `${formatSize(size)} ops/s`)
  header.push(`p99 ${formatSize(sizes.at(-1)!)}/${formatSize(sizes[0]!)}`)
  const rows = [header]
  for (const result of results) {
    for (const name of CASES) {
      const row: string[] = [result.store, name]
      for (const size of sizes) {
        const each = result.cases[name][size]!
        row.push(formatUs(each.p50), formatUs(each.p99), Math.round(each.opsPerSecond).toLocaleString('en'))
      }
      const ratio = result.cases[name].ratio
      row.push(`${ratio.toFixed(2)}${ratio > RATIO_TARGET ? ' ✗' : ''}`)
      rows.push(row)
    }
  }
  const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => cell.padStart(widths[column]!)).join('  ')).join('\n')
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,1000000' },
      only: { type: 'string', default: STORES.join(',') },
      seconds: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '20' },
      'no-rss': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  })
  const sizes = values.sizes
    .split(',')
    .map(Number)
    .sort((a, b) => a - b)
  if (sizes.length < 2 || sizes.some((size) => !Number.isSafeInteger(size) || size < 1100)) {
    throw new Error('--sizes takes two or more sizes of at least 1100 pets (the deep page reads among the last 1,000)')
  }
  const only = values.only.split(',') as StoreName[]
  for (const name of only) if (!STORES.includes(name)) throw new Error(`--only: unknown store ${name}`)
  const seconds = Number(values.seconds)
  const rounds = Math.max(1, Math.trunc(Number(values.rounds)))

  const dir = mkdtempSync(join(tmpdir(), 'petstore-scale-'))
  const cleanups = new Cleanups(log)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  cleanups.runOnSignals((signal) => log(`${signal}: cleaning up`))

  const results: StoreResult[] = []
  const notes: string[] = []
  let rss: Awaited<ReturnType<typeof memoryRss>> | undefined
  try {
    for (const store of only) {
      if (store === 'postgres' && !POSTGRES_URL) {
        notes.push('postgres skipped: set PETSTORE_BENCH_POSTGRES_URL (or PETSTORE_TEST_POSTGRES_URL)')
        continue
      }
      results.push(await benchStore(store, sizes, { seconds, rounds, dir, cleanups }))
    }
    if (!values['no-rss']) {
      log(`[rss] a memoryStore of ${sizes.at(-1)!.toLocaleString('en')} pets in a plain node process…`)
      rss = await memoryRss(sizes.at(-1)!, dir)
    }
  } finally {
    await cleanups.run()
  }

  if (values.json) {
    process.stdout.write(`${JSON.stringify({ sizes, results, rss, notes }, null, 2)}\n`)
    return
  }
  const lines = [
    `Stores in process, one call at a time, ${seconds} s per case and size in ${rounds} rounds; Node ${process.versions.node}.`,
    'A page is the store’s JSON text where it writes one (sqlite, postgres), else petsJson(list()) (memory); a get includes petJson(pet).',
    '',
    table(results, sizes),
    '',
    ...results.map(
      (result) =>
        `${result.store}: seeded ${sizes.map((size) => `${formatSize(size)} in ${result.seed[size]!.seconds.toFixed(1)} s`).join(', ')}`,
    ),
  ]
  if (rss) {
    const over = rss.rssMb > RSS_TARGET_MB ? ` ✗ over ${RSS_TARGET_MB} MB` : ''
    lines.push(
      `memory RSS with ${sizes.at(-1)!.toLocaleString('en')} pets: ${rss.rssMb.toFixed(0)} MB${over} ` +
        `(heap ${rss.heapMb.toFixed(0)} MB; the same process empty: ${rss.emptyRssMb.toFixed(0)} MB)`,
    )
  }
  lines.push(...notes, `✗: p99 more than ${RATIO_TARGET}× that of ${formatSize(sizes[0]!)} pets.`)
  const tiny = results.flatMap((result) =>
    CASES.filter((name) => (result.cases[name][sizes[0]!]?.p99 ?? Number.POSITIVE_INFINITY) < 2).map(
      (name) => `${result.store} ${name}`,
    ),
  )
  if (tiny.length > 0) {
    lines.push(
      `Under 2 µs (${tiny.join(', ')}), a ratio mostly measures the CPU's caches: a million pets do not fit in them, ten thousand do.`,
    )
  }
  process.stdout.write(`${lines.join('\n')}\n`)
}

if (process.argv.includes('--child')) {
  await child()
} else {
  await main()
}
