// Benchmark: our server against the hand-written node:http baseline
// (bench/baseline-server.ts), same API, same data, same load.
//
//   npm run bench -- [--duration 5] [--json] [--only memory|sqlite] [--scenarios list,filtered,get,create]
//
// Progress goes to stderr; the table (or JSON with --json) to stdout. This is
// a measurement, not a test: it exits non-zero only if setup fails.
// `--ours-cmd "CMD ARGS"` replaces the command that starts our server (split
// on spaces), e.g. to check the harness against the baseline twice.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { formatTable, type Measurement, type Row, type StoreName } from './report.js'
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
const STORES: readonly StoreName[] = ['memory', 'sqlite']
// Resolved from this script's path (not import.meta) so it works whether tsx loads it as ESM or CJS.
const ROOT = resolve(dirname(process.argv[1] ?? '.'), '..')
const BASELINE_COMMAND: readonly string[] = [process.execPath, '--import', 'tsx', 'bench/baseline-server.ts']

interface Options {
  durationSeconds: number
  json: boolean
  stores: StoreName[]
  scenarios: ScenarioName[]
  oursCommand: string[]
}

interface Side {
  server: ServerProcess
  scenarios: Record<ScenarioName, Scenario>
}

/** Undo steps for what the run set up (servers, temp dirs), run newest first; also on error or Ctrl-C. */
const cleanups: Array<() => Promise<void>> = []

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
  const durationSeconds = Number(values.duration)
  if (!(durationSeconds > 0)) throw new Error('--duration must be a positive number of seconds')

  const only = values.only
  if (only !== undefined && only !== 'memory' && only !== 'sqlite') throw new Error('--only must be memory or sqlite')

  const scenarios = values.scenarios === undefined ? [...SCENARIO_NAMES] : values.scenarios.split(',')
  const unknown = scenarios.filter((name) => !isScenarioName(name))
  if (unknown.length > 0)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIO_NAMES.join(', ')}`)

  return {
    durationSeconds,
    json: values.json,
    stores: only === undefined ? [...STORES] : [only],
    scenarios: scenarios.filter(isScenarioName),
    oursCommand: oursCommand(values['ours-cmd']),
  }
}

/** Prefer the built binary; fall back to running the TypeScript source. */
function oursCommand(custom: string | undefined): string[] {
  if (custom !== undefined) return custom.trim().split(/\s+/)
  const built = 'dist/bin/petstore-server.js'
  return existsSync(join(ROOT, built)) ? [process.execPath, built] : ['npx', 'tsx', 'bin/petstore-server.ts']
}

function log(message: string): void {
  process.stderr.write(`${message}\n`)
}

async function start(name: string, command: readonly string[], db: string): Promise<ServerProcess> {
  const server = await startServer(name, [...command, '--port', '0', '--key', KEY, '--db', db], ROOT)
  cleanups.push(() => server.stop())
  log(`${name}: ${server.baseUrl} (--db ${db})`)
  return server
}

async function cleanUp(): Promise<void> {
  for (let step = cleanups.pop(); step !== undefined; step = cleanups.pop()) await step()
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

async function benchStore(store: StoreName, options: Options): Promise<Row[]> {
  const dir = store === 'sqlite' ? await mkdtemp(join(tmpdir(), 'petstore-bench-')) : undefined
  if (dir !== undefined) cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const db = (name: string): string => (dir === undefined ? 'memory' : `sqlite:${join(dir, `${name}.db`)}`)
  try {
    log(`[${store}] starting servers`)
    const oursServer = await start('ours', options.oursCommand, db('ours'))
    const baselineServer = await start('baseline', BASELINE_COMMAND, db('baseline'))
    log(`[${store}] seeding ${SEED_COUNT} pets into each`)
    const ours: Side = { server: oursServer, scenarios: buildScenarios(KEY, await seed(oursServer.baseUrl, KEY)) }
    const baseline: Side = {
      server: baselineServer,
      scenarios: buildScenarios(KEY, await seed(baselineServer.baseUrl, KEY)),
    }

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
  const options = parseOptions()
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      void cleanUp().finally(() => process.exit(code))
    })
  }
  log(`ours: ${options.oursCommand.join(' ')}`)
  log(`baseline: ${BASELINE_COMMAND.join(' ')}`)

  const rows: Row[] = []
  for (const store of options.stores) rows.push(...(await benchStore(store, options)))

  if (options.json) {
    const config = {
      durationSeconds: options.durationSeconds,
      connections: CONNECTIONS,
      seedCount: SEED_COUNT,
      node: process.version,
      oursCommand: options.oursCommand,
    }
    process.stdout.write(`${JSON.stringify({ config, results: rows }, null, 2)}\n`)
  } else {
    process.stdout.write(`\n${formatTable(rows)}\n`)
  }
}

main().catch(async (error: unknown) => {
  log(`bench: ${error instanceof Error ? error.message : String(error)}`)
  await cleanUp()
  process.exit(1)
})
