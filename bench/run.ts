// Benchmark: our server against the hand-written node:http baseline
// (bench/baseline-server.ts), same API, same data, same load.
//
//   npm run bench -- [--duration 5] [--json] [--only memory,sqlite,postgres,mysql] [--scenarios list,filtered,get,create]
//
// PostgreSQL and MySQL (or MariaDB) are benched when their server is named:
// PETSTORE_BENCH_POSTGRES_URL (else PETSTORE_TEST_POSTGRES_URL), e.g.
// postgres://postgres@127.0.0.1:5432/test, and PETSTORE_BENCH_MYSQL_URL (else
// PETSTORE_TEST_MYSQL_URL), e.g. mysql://root@127.0.0.1:3306/test; without
// one, that store is skipped with a note. Each run works in a fresh
// PostgreSQL schema / MySQL database petstore_bench_<random> (so the user needs
// the right to create one), dropped at the end, on error and on Ctrl-C; both
// servers share it, ours in petstore_pets, the baseline in baseline_pets.
// The database servers are outside the CPU pinning below: on a machine that
// also runs them, they compete with the server under test.
//
// Progress goes to stderr; the table (or JSON with --json) to stdout. This is
// a measurement, not a test: it exits non-zero only if setup fails (a server
// does not start, seeding fails, the two servers hold different data).
// Differences in what the servers answer are reported under the table.
// Our server runs as a user runs it: node dist/bin/petstore-server.js when
// built (npm run build), else the TypeScript source through tsx.
// `--ours-cmd "CMD ARGS"` replaces that command (split on spaces), e.g. to
// check the harness by running the baseline against itself.
// With taskset and two CPUs, servers run on CPU 0 and this process (the load
// generator, autocannon runs in-process) on CPU 1, so they do not compete.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { compareAnswers, compareData } from './parity.js'
import { formatTable, type Measurement, type Row, STORE_NAMES, type StoreName } from './report.js'
import {
  buildScenarios,
  isScenarioName,
  probe,
  type RequestSpec,
  SCENARIO_NAMES,
  type Scenario,
  type ScenarioName,
  SEED_COUNT,
  seed,
} from './scenarios.js'
import { type ServerProcess, startServer } from './server-process.js'

const CONNECTIONS = 50
const WARMUP_SECONDS = 1
const KEY = 'bench-key'
/** Where the SQL stores' servers are named; the first variable set wins. */
const SERVER_URL_VARIABLES: Partial<Record<StoreName, readonly string[]>> = {
  postgres: ['PETSTORE_BENCH_POSTGRES_URL', 'PETSTORE_TEST_POSTGRES_URL'],
  mysql: ['PETSTORE_BENCH_MYSQL_URL', 'PETSTORE_TEST_MYSQL_URL'],
}
// Resolved from this script's path (not import.meta) so it works whether tsx loads it as ESM or CJS.
const ROOT = resolve(dirname(process.argv[1] ?? '.'), '..')
const BUILT_BINARY = 'dist/bin/petstore-server.js'
const BASELINE_COMMAND: readonly string[] = [process.execPath, '--import', 'tsx', 'bench/baseline-server.ts']

interface Options {
  durationSeconds: number
  json: boolean
  stores: StoreName[]
  scenarios: ScenarioName[]
  ours: { command: string[]; how: string }
}

interface Side {
  server: ServerProcess
  scenarios: Record<ScenarioName, Scenario>
}

/** Undo steps for what the run set up (servers, temp dirs), run newest first: after each store, on error, on Ctrl-C. */
const cleanups: Array<() => Promise<void> | void> = []
/** Temp dirs not yet removed: the last resort on exit, should a cleanup step never run. */
const tempDirs = new Set<string>()
process.on('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
      only: { type: 'string' },
      scenarios: { type: 'string' },
      'ours-cmd': { type: 'string' },
    },
  })
  // Whole seconds: autocannon samples requests/s once a second.
  const durationSeconds = Number(values.duration)
  if (!(Number.isInteger(durationSeconds) && durationSeconds > 0)) {
    throw new Error('--duration must be a whole number of seconds, at least 1')
  }

  const only = values.only === undefined ? [...STORE_NAMES] : values.only.split(',').map((name) => name.trim())
  const unknownStores = only.filter((name) => !isStoreName(name))
  if (unknownStores.length > 0 || only.length === 0) {
    throw new Error(`--only takes a comma-separated list of ${STORE_NAMES.join(', ')}; got "${values.only}"`)
  }

  const scenarios = values.scenarios === undefined ? [...SCENARIO_NAMES] : values.scenarios.split(',')
  const unknown = scenarios.filter((name) => !isScenarioName(name))
  if (unknown.length > 0)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIO_NAMES.join(', ')}`)

  return {
    durationSeconds,
    json: values.json,
    stores: [...new Set(only.filter(isStoreName))],
    scenarios: scenarios.filter(isScenarioName),
    ours: oursCommand(values['ours-cmd']),
  }
}

function isStoreName(value: string): value is StoreName {
  return (STORE_NAMES as readonly string[]).includes(value)
}

/** The database server of a SQL store, from the environment; undefined when unset (or not a SQL store). */
function serverUrl(store: StoreName): string | undefined {
  for (const variable of SERVER_URL_VARIABLES[store] ?? []) {
    const value = process.env[variable]?.trim()
    if (value) return value
  }
  return undefined
}

/** A URL fit for logs and tables: no password, no user. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@')
}

/** Prefer the built binary, as installed users run it; fall back to the TypeScript source. */
function oursCommand(custom: string | undefined): Options['ours'] {
  if (custom !== undefined) return { command: custom.trim().split(/\s+/), how: 'custom command (--ours-cmd)' }
  if (!existsSync(join(ROOT, BUILT_BINARY))) {
    return {
      command: [process.execPath, '--import', 'tsx', 'bin/petstore-server.ts'],
      how: `TypeScript source through tsx (no ${BUILT_BINARY}; npm run build to bench the build)`,
    }
  }
  const stale = newestSource() > statSync(join(ROOT, BUILT_BINARY)).mtimeMs
  const how = `built ${BUILT_BINARY}${stale ? ' (WARNING: older than the sources, npm run build)' : ''}`
  return { command: [process.execPath, BUILT_BINARY], how }
}

/** Latest change to what the binary is built from. */
function newestSource(): number {
  const dirs = ['src', 'bin', 'adapters'].map((dir) => join(ROOT, dir)).filter((dir) => existsSync(dir))
  const files = dirs.flatMap((dir) => readdirSync(dir, { recursive: true }).map((file) => join(dir, String(file))))
  return Math.max(0, ...files.map((file) => statSync(file).mtimeMs))
}

/**
 * Pins this process (autocannon) to CPU 1 and returns the prefix that starts
 * servers on CPU 0; empty when that is not possible (no taskset, one CPU).
 */
function pinCpus(): { serverPrefix: string[]; how: string } {
  if (availableParallelism() < 2) return { serverPrefix: [], how: 'not pinned (fewer than 2 CPUs)' }
  try {
    execFileSync('taskset', ['--cpu-list', '0', 'true'], { stdio: 'ignore' })
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '1', String(process.pid)], { stdio: 'ignore' })
  } catch {
    return { serverPrefix: [], how: 'not pinned (taskset missing or not allowed)' }
  }
  return { serverPrefix: ['taskset', '--cpu-list', '0'], how: 'servers on CPU 0, load generator on CPU 1' }
}

function log(message: string): void {
  process.stderr.write(`${message}\n`)
}

async function start(name: string, command: readonly string[], db: string): Promise<ServerProcess> {
  const server = await startServer(name, [...command, '--port', '0', '--key', KEY, '--db', db], ROOT)
  cleanups.push(() => server.stop())
  log(`${name}: ${server.baseUrl} (--db ${redact(db)})`)
  return server
}

function freshName(): string {
  return `petstore_bench_${randomBytes(4).toString('hex')}`
}

/**
 * Creates a fresh schema on the PostgreSQL server of `base` and returns `base`
 * pointing at it (`?schema=`, as our binary takes it); the schema is dropped,
 * with everything in it, by a cleanup step.
 */
async function freshPostgresSchema(base: string): Promise<string> {
  const { default: pg } = await import('pg')
  const url = new URL(base)
  url.searchParams.delete('schema') // ours, not pg's
  const schema = freshName()
  const admin = async (statement: string): Promise<void> => {
    const client = new pg.Client({ connectionString: url.href, connectionTimeoutMillis: 5_000 })
    client.on('error', () => {}) // a dropped connection fails the query below, which is enough
    try {
      await client.connect()
      await client.query(statement)
    } catch (error) {
      throw new Error(`postgres ${redact(url.href)}: ${statement}: ${(error as Error).message}`)
    } finally {
      await client.end().catch(() => {})
    }
  }
  // Registered before creating, so a Ctrl-C in between still drops it (IF EXISTS).
  // Runs after the servers stop: cleanups run newest first.
  cleanups.push(async () => {
    await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    log(`[postgres] dropped schema ${schema}`)
  })
  await admin(`CREATE SCHEMA "${schema}"`)
  log(`[postgres] schema ${schema} on ${redact(url.href)}`)
  url.searchParams.set('schema', schema)
  return url.href
}

/** Creates a fresh database on the MySQL server of `base` and returns `base` pointing at it; dropped by a cleanup step. */
async function freshMysqlDatabase(base: string): Promise<string> {
  const { createConnection } = await import('mysql2/promise')
  const database = freshName()
  const admin = async (statement: string): Promise<void> => {
    let connection: Awaited<ReturnType<typeof createConnection>> | undefined
    try {
      connection = await createConnection({ uri: base, connectTimeout: 5_000 })
      connection.on('error', () => {})
      await connection.query(statement)
    } catch (error) {
      throw new Error(`mysql ${redact(base)}: ${statement}: ${(error as Error).message}`)
    } finally {
      await connection?.end().catch(() => {})
    }
  }
  cleanups.push(async () => {
    await admin(`DROP DATABASE IF EXISTS \`${database}\``)
    log(`[mysql] dropped database ${database}`)
  })
  await admin(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
  const url = new URL(base)
  url.pathname = `/${database}`
  log(`[mysql] database ${database} on ${redact(base)}`)
  return url.href
}

/**
 * The --db value of each server for `store`, after creating what it needs (a
 * temp dir, a schema, a database) and registering its removal.
 */
async function prepareStore(store: StoreName): Promise<{ ours: string; baseline: string }> {
  switch (store) {
    case 'memory':
      return { ours: 'memory', baseline: 'memory' }
    case 'sqlite': {
      const dir = await mkdtemp(join(tmpdir(), 'petstore-bench-'))
      tempDirs.add(dir)
      cleanups.push(() => {
        rmSync(dir, { recursive: true, force: true })
        tempDirs.delete(dir)
      })
      return { ours: `sqlite:${join(dir, 'ours.db')}`, baseline: `sqlite:${join(dir, 'baseline.db')}` }
    }
    case 'postgres':
    case 'mysql': {
      const base = serverUrl(store)
      if (base === undefined) throw new Error(`no server URL for ${store}`)
      // One schema/database for both: ours uses petstore_pets, the baseline baseline_pets.
      const db = store === 'postgres' ? await freshPostgresSchema(base) : await freshMysqlDatabase(base)
      return { ours: db, baseline: db }
    }
  }
}

async function cleanUp(): Promise<void> {
  for (let step = cleanups.pop(); step !== undefined; step = cleanups.pop()) {
    try {
      await step()
    } catch (error) {
      log(`bench: cleanup: ${(error as Error).message}`)
    }
  }
}

async function load(baseUrl: string, request: RequestSpec, durationSeconds: number): Promise<Measurement> {
  const result = await autocannon({
    url: `${baseUrl}${request.path}`,
    connections: CONNECTIONS,
    duration: durationSeconds,
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  })
  return {
    reqPerSec: result.requests.average,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  }
}

/** Probe, warm up, then measure one server on one scenario; problems go into `notes`. */
async function measure(
  label: string,
  side: Side,
  name: ScenarioName,
  options: Options,
  notes: string[],
): Promise<Measurement> {
  const scenario = side.scenarios[name]
  const problem = await probe(side.server.baseUrl, scenario)
  if (problem !== undefined) notes.push(`${label} probe: ${problem}`)
  await load(side.server.baseUrl, scenario.request, WARMUP_SECONDS)
  const measurement = await load(side.server.baseUrl, scenario.request, options.durationSeconds)
  if (measurement.non2xx > 0) notes.push(`${label}: ${measurement.non2xx} non-2xx of ${measurement.requests}`)
  if (measurement.errors > 0) notes.push(`${label}: ${measurement.errors} connection errors`)
  log(`  ${label.padEnd(8)} ${measurement.reqPerSec.toFixed(0).padStart(7)} req/s  p99 ${measurement.p99Ms} ms`)
  return measurement
}

/** Starts both servers on one store, seeds and compares them, then measures every scenario. */
async function benchStore(
  store: StoreName,
  options: Options,
  serverPrefix: string[],
  warnings: string[],
): Promise<Row[]> {
  try {
    const db = await prepareStore(store)
    log(`[${store}] starting servers`)
    const oursServer = await start('ours', [...serverPrefix, ...options.ours.command], db.ours)
    const baselineServer = await start('baseline', [...serverPrefix, ...BASELINE_COMMAND], db.baseline)
    log(`[${store}] seeding ${SEED_COUNT} pets into each`)
    const seeded = await seed(oursServer.baseUrl, KEY)
    const baselineSeeded = await seed(baselineServer.baseUrl, KEY)
    log(`[${store}] both hold ${await compareData(oursServer.baseUrl, baselineServer.baseUrl, KEY)}`)
    if (seeded.existingId !== baselineSeeded.existingId) throw new Error('seeding gave the servers different ids')
    const differences = await compareAnswers(oursServer.baseUrl, baselineServer.baseUrl, KEY, seeded.existingId)
    for (const difference of differences) warnings.push(`${store}: ours and baseline answer differently: ${difference}`)
    log(`[${store}] parity: ${differences.length === 0 ? 'same answers' : `${differences.length} difference(s)`}`)

    const ours: Side = { server: oursServer, scenarios: buildScenarios(KEY, seeded) }
    const baseline: Side = { server: baselineServer, scenarios: buildScenarios(KEY, seeded) }
    const rows: Row[] = []
    // Ours then baseline for each scenario, so both run under the same machine conditions.
    for (const scenario of options.scenarios) {
      log(`[${store}] ${scenario}`)
      const notes: string[] = []
      const oursResult = await measure('ours', ours, scenario, options, notes)
      const baselineResult = await measure('baseline', baseline, scenario, options, notes)
      const ratio = baselineResult.reqPerSec > 0 ? oursResult.reqPerSec / baselineResult.reqPerSec : Number.NaN
      rows.push({ store, scenario, ours: oursResult, baseline: baselineResult, ratio, notes })
    }
    return rows
  } finally {
    await cleanUp()
  }
}

async function main(): Promise<void> {
  let stopping = false
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      // A repeated Ctrl-C must not kill us halfway through stopping the servers.
      if (stopping) return
      stopping = true
      log(`bench: ${signal}, stopping servers`)
      void cleanUp().finally(() => process.exit(code))
    })
  }
  const options = parseOptions()
  const skipped = options.stores.filter((store) => SERVER_URL_VARIABLES[store] !== undefined && !serverUrl(store))
  const stores = options.stores.filter((store) => !skipped.includes(store))
  const skipNotes = skipped.map(
    (store) => `${store}: skipped, no server (set ${(SERVER_URL_VARIABLES[store] ?? []).join(' or ')})`,
  )
  for (const note of skipNotes) log(note)
  if (stores.length === 0) throw new Error('nothing to bench: every store asked for was skipped')
  const pinning = pinCpus()
  const config = {
    ours: options.ours.how,
    oursCommand: options.ours.command,
    baselineCommand: BASELINE_COMMAND,
    cpus: pinning.how,
    durationSeconds: options.durationSeconds,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    seedCount: SEED_COUNT,
    node: process.version,
    stores,
    skipped,
    databaseServers: Object.fromEntries(
      stores.flatMap((store) => {
        const url = serverUrl(store)
        return url === undefined ? [] : [[store, redact(url)]]
      }),
    ),
  }
  log(`ours: ${config.ours}: ${options.ours.command.join(' ')}`)
  log(`baseline: ${BASELINE_COMMAND.join(' ')}`)
  log(`cpus: ${pinning.how}`)

  const rows: Row[] = []
  const warnings: string[] = []
  for (const store of stores) rows.push(...(await benchStore(store, options, pinning.serverPrefix, warnings)))

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ config, warnings, results: rows }, null, 2)}\n`)
  } else {
    const header = [
      `ours: ${config.ours}; baseline: bench/baseline-server.ts through tsx`,
      `${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${options.durationSeconds} s per run, ${SEED_COUNT} seeded pets, node ${process.version}, ${pinning.how}`,
      ...stores.flatMap((store) => {
        const url = serverUrl(store)
        const fresh = store === 'postgres' ? 'schema' : 'database'
        return url === undefined ? [] : [`${store}: server ${redact(url)} (not pinned), a fresh ${fresh} per run`]
      }),
      ...skipNotes,
    ]
    process.stdout.write(`\n${header.join('\n')}\n\n${formatTable(rows, warnings)}\n`)
  }
}

main().catch(async (error: unknown) => {
  log(`bench: ${error instanceof Error ? error.message : String(error)}`)
  await cleanUp()
  process.exit(1)
})
