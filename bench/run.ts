// Benchmark: our server beside the same API written by hand on node:http
// (bench/peers/node-http.mjs, the yardstick), on Fastify 5 (bench/peers/fastify.mjs)
// and on Hono 4 (bench/peers/hono.mjs), on the same store, under the same load;
// our fetch handler mounted three ways as users embed it (bench/embedded/*.mjs);
// then our API on Bun and Deno beside our binary on Node (bench/runtimes.ts).
// What each peer does and why the comparison is fair: bench/README.md.
//
//   npm run bench -- [--duration 5] [--rounds 3] [--json] [--loadgen wrk|autocannon]
//                    [--only memory,sqlite,postgres,mysql,embedded,runtimes]
//                    [--scenarios list,filtered,get,create,unauthorized,missing,invalid,noroute]
//                    [--ours-cmd "CMD ARGS"]
//                    [--at-once ours|all|off] [--svg FILE]
//
// Besides its tables, it writes the at-once ratios as a chart (bench/chart.ts) to --svg FILE,
// bench/results.svg by default.
//
// Scenarios: list (?limit=20), filtered (?status=sold&limit=100), get (one pet),
// create (POST), unauthorized (list with a wrong key: a 401, the cost of a
// refusal); by name only, missing (a pet that is not there: a 404), noroute (a path
// the API does not have: a 404) and invalid (a create the validation refuses: a 400).
// Every server is checked first: same seeded data as ours, same
// answers as ours to a set of probes, byte for byte, headers included
// (bench/parity.ts), and each scenario's answer before it is measured.
//
// The peers are plain JavaScript run by `node` itself, no loader; the
// embedded group imports the built package (dist/: npm run build) and is
// skipped without it. Embedded servers: node-listener (toNodeListener in
// http.createServer), whatwg-node (@whatwg-node/server's createServerAdapter
// in http.createServer), hono-node-server (@hono/node-server's serve({ fetch })),
// beside our binary and the node:http yardstick, on the memory store.
//
// Rounds: each round starts every server afresh (a fresh database too), one
// at a time, each seeded and warmed up alone (bench/README.md, "Why the comparison is fair"),
// then runs every scenario on every server, the servers in an order rotated
// from round to round (and scenario to scenario), so that drift of the
// machine (heat, other load) hits them all alike; a server's figure is its
// median over the rounds and the spread says how much it moved.
// Ratios divide by the node:http yardstick (runtimes: by our binary on Node).
//
// At once (--at-once ours, the default; all: every server of the group, one by one;
// off): after its rounds' scenarios, each round also runs ours and the yardstick at the
// same time, both on the servers' core, each under its own load generator, for every
// scenario, and compares their CPU per request (bench/at-once.ts). Each pair is a fresh
// yardstick and a fresh server, started and warmed up alone like a round's. One after the other,
// a ratio scatters by 10-30 points on these machines; at once, by 1-3%: the column
// "at once" is the ratio to read.
//
// PostgreSQL and MySQL (or MariaDB) are benched when their server is named:
// PETSTORE_BENCH_POSTGRES_URL (else PETSTORE_TEST_POSTGRES_URL), e.g.
// postgres://postgres@127.0.0.1:5432/test, and PETSTORE_BENCH_MYSQL_URL (else
// PETSTORE_TEST_MYSQL_URL), e.g. mysql://root@127.0.0.1:3306/test; without
// one, that store is skipped with a note. Each run works in a fresh
// PostgreSQL schema / MySQL database petstore_bench_<random> (so the user needs
// the right to create one), dropped at the end, on error and on Ctrl-C; all
// servers share it, ours in petstore_pets, the peers in node_http_pets,
// fastify_pets and hono_pets. The database servers are outside the CPU
// pinning below: on a machine that also runs them, they compete with the
// server under test.
//
// Progress goes to stderr; the tables (or JSON with --json) to stdout. This is
// a measurement, not a test: it exits non-zero only if setup fails (a server
// does not start, seeding fails, the servers hold different data).
// Differences in what the servers answer are reported under the tables.
// Our server runs as a user runs it: node dist/bin/petstore-server.js when
// built (npm run build), else the TypeScript source through tsx.
// `--ours-cmd "CMD ARGS"` replaces that command (split on spaces), e.g. to
// check the harness by running the yardstick against itself.
//
// Load generator (bench/loadgen.ts): wrk when it is on PATH (Debian: apt-get
// install wrk), one thread, 50 connections, a Lua script per scenario for the
// method, headers and body, p50/p99 from wrk's latency distribution; else
// autocannon in this process, 50 connections. autocannon saturates its core
// near 75k req/s on a 2-core machine, so with it the fast scenarios (get, the
// 401) measure the generator; wrk on the same core goes well past that.
// With taskset and two CPUs, servers run on CPU 0 and this process and the
// generator on CPU 1 (wrk inherits the pinning), so they do not compete.
// The generator's CPU use is measured on every run: at 90% of its core or
// more, it is the limit, not the server, and the ratio is flagged.
// autocannon's `workers` option is left off on purpose: pinned, its worker
// threads would share the generator's one core and add no capacity. On a
// machine with more cores, pin the servers and the generator to disjoint sets.
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { measureAtOnce } from './at-once.js'
import { barsOf, CHART_TITLE, chartSvg } from './chart.js'
import { Cleanups } from './cleanups.js'
import {
  CONNECTIONS,
  defaultLoadgen,
  LOADGEN_NAMES,
  type LoadgenName,
  load,
  seedAndWarm,
  WARMUP_SECONDS,
} from './loadgen.js'
import { compareAnswers, compareData } from './parity.js'
import { pinCpus } from './pinning.js'
import {
  formatGroup,
  type Group,
  type Measurement,
  type Row,
  STORE_NAMES,
  type StoreName,
  setRatios,
  summarize,
} from './report.js'
import { runtimeServers } from './runtimes.js'
import {
  buildScenarios,
  DEFAULT_SCENARIOS,
  probe,
  SCENARIO_NAMES,
  type Scenario,
  type ScenarioName,
  SEED_COUNT,
  type SeedResult,
} from './scenarios.js'
import { type ServerProcess, startServer } from './server-process.js'
import { wholeNumber } from './whole-number.js'

const KEY = 'bench-key'
// One cursor secret for every server started (they inherit the environment), so that parity can compare their Links.
process.env.PETSTORE_CURSOR_SECRET ||= randomBytes(32).toString('base64url')
const GROUP_NAMES = [...STORE_NAMES, 'embedded', 'runtimes'] as const
type GroupName = (typeof GROUP_NAMES)[number]
/** Where the SQL stores' servers are named; the first variable set wins. */
const SERVER_URL_VARIABLES: Partial<Record<StoreName, readonly string[]>> = {
  postgres: ['PETSTORE_BENCH_POSTGRES_URL', 'PETSTORE_TEST_POSTGRES_URL'],
  mysql: ['PETSTORE_BENCH_MYSQL_URL', 'PETSTORE_TEST_MYSQL_URL'],
}
// Resolved from this script's path (not import.meta) so it works whether tsx loads it as ESM or CJS.
const ROOT = resolve(dirname(process.argv[1] ?? '.'), '..')
const BUILT_BINARY = 'dist/bin/petstore-server.js'
/** The lean peers, plain JavaScript run by node with the same arguments; the first is the yardstick. */
const PEERS = [
  { name: 'node-http', script: 'bench/peers/node-http.mjs', what: 'node:http by hand' },
  { name: 'fastify', script: 'bench/peers/fastify.mjs', what: 'Fastify with route and response schemas' },
  { name: 'hono', script: 'bench/peers/hono.mjs', what: 'Hono on @hono/node-server' },
] as const
/** Our fetch handler from the built package, mounted as users embed it. */
const EMBEDDED = [
  { name: 'node-listener', script: 'bench/embedded/node-listener.mjs', what: 'toNodeListener in http.createServer' },
  { name: 'whatwg-node', script: 'bench/embedded/whatwg-node.mjs', what: '@whatwg-node/server in http.createServer' },
  {
    name: 'hono-node-server',
    script: 'bench/embedded/hono-node-server.mjs',
    what: "@hono/node-server's serve({ fetch })",
  },
] as const
/**
 * On a SQL store, the yardstick once more with its pages read as rows and written as JSON in
 * JavaScript (`--rows`), as hand-written servers and the Fastify and Hono peers do: the
 * yardstick proper runs our store's own SQL, which has the database write the page's JSON.
 */
const ROWS_PEER = {
  name: 'node-http-rows',
  script: PEERS[0].script,
  what: 'node:http by hand, pages read as rows',
} as const
type ServerName = 'ours' | (typeof PEERS)[number]['name'] | typeof ROWS_PEER.name | (typeof EMBEDDED)[number]['name']
const REFERENCE: ServerName = 'node-http'
/** Embedded mounts whose framing (content-length or chunked) is the host's, not the API's. */
const HOST_FRAMED = new Set<string>(['whatwg-node'])

interface Options {
  durationSeconds: number
  rounds: number
  json: boolean
  groups: GroupName[]
  scenarios: ScenarioName[]
  ours: { command: string[]; how: string }
  loadgen: LoadgenName
  /** Which servers each round also measures at once with the reference (bench/at-once.ts): ours, all of them, or none. */
  atOnce: 'ours' | 'all' | 'off'
  /** Where the chart of the at-once ratios goes. */
  svg: string
}

/** A server to start: its name in the tables, its full command line, its environment. */
interface ServerSpec {
  name: string
  command: string[]
  env?: Record<string, string>
}

interface Running {
  name: string
  server: ServerProcess
}

/** Undo steps for what the run set up (servers, temp dirs), run newest first: after each group, on error, on Ctrl-C. */
const cleanups = new Cleanups((line) => log(`bench: ${line}`))
/** Temp dirs not yet removed: the last resort on exit, should a cleanup step never run. */
const tempDirs = new Set<string>()
process.on('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** A comma-separated option as a list of known names; throws naming the unknown ones. */
function nameList<T extends string>(option: string, value: string | undefined, known: readonly T[]): T[] {
  if (value === undefined) return [...known]
  const names = value.split(',').map((name) => name.trim())
  const unknown = names.filter((name) => !(known as readonly string[]).includes(name))
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`${option} takes a comma-separated list of ${known.join(', ')}; got "${value}"`)
  }
  return [...new Set(names as T[])]
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
      only: { type: 'string' },
      scenarios: { type: 'string' },
      'ours-cmd': { type: 'string' },
      loadgen: { type: 'string' },
      'at-once': { type: 'string', default: 'ours' },
      svg: { type: 'string', default: 'bench/results.svg' },
    },
  })
  const [atOnce = 'ours'] = nameList('--at-once', values['at-once'], ['ours', 'all', 'off'] as const)
  const [loadgen] = nameList('--loadgen', values.loadgen ?? defaultLoadgen(), LOADGEN_NAMES)
  return {
    // Whole seconds: autocannon samples requests/s once a second.
    durationSeconds: wholeNumber('--duration', values.duration),
    rounds: wholeNumber('--rounds', values.rounds),
    json: values.json,
    svg: values.svg,
    groups: nameList('--only', values.only, GROUP_NAMES),
    scenarios:
      values.scenarios === undefined
        ? [...DEFAULT_SCENARIOS]
        : nameList('--scenarios', values.scenarios, SCENARIO_NAMES),
    ours: oursCommand(values['ours-cmd']),
    loadgen: loadgen ?? 'autocannon',
    atOnce,
  }
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
  return url.replace(/\/\/[^@/]*@/g, '//***@')
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

function log(message: string): void {
  process.stderr.write(`${message}\n`)
}

async function start(spec: ServerSpec, serverPrefix: readonly string[]): Promise<Running> {
  const server = await startServer(spec.name, [...serverPrefix, ...spec.command], ROOT, spec.env)
  cleanups.push(() => server.stop())
  log(`${spec.name}: ${server.baseUrl} (${redact(spec.command.slice(1).join(' '))})`)
  return { name: spec.name, server }
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
async function prepareStore(store: StoreName): Promise<(server: ServerName) => string> {
  switch (store) {
    case 'memory':
      return () => 'memory'
    case 'sqlite': {
      const dir = await mkdtemp(join(tmpdir(), 'petstore-bench-'))
      tempDirs.add(dir)
      cleanups.push(() => {
        rmSync(dir, { recursive: true, force: true })
        tempDirs.delete(dir)
      })
      // A file each: SQLite serializes writers per file, so a shared one would couple the servers.
      return (server) => `sqlite:${join(dir, `${server}.db`)}`
    }
    case 'postgres':
    case 'mysql': {
      const base = serverUrl(store)
      if (base === undefined) throw new Error(`no server URL for ${store}`)
      // One schema/database for all: each server has a table of its own.
      const db = store === 'postgres' ? await freshPostgresSchema(base) : await freshMysqlDatabase(base)
      return () => db
    }
  }
}

/** `list` moved `by` places to the left: the order of the servers in one round and scenario. */
function rotate<T>(list: readonly T[], by: number): T[] {
  const start = list.length === 0 ? 0 : by % list.length
  return [...list.slice(start), ...list.slice(0, start)]
}

/** What went wrong across a server's rounds on a scenario, as row notes. */
function roundNotes(rounds: readonly Measurement[], scenario: Scenario): string[] {
  const total = rounds.reduce((sum, round) => sum + round.requests, 0)
  const unexpected = rounds.reduce((sum, round) => sum + round.unexpected, 0)
  const errors = rounds.reduce((sum, round) => sum + round.errors, 0)
  return [
    ...(unexpected > 0 ? [`${unexpected} of ${total} answers not ${scenario.status}`] : []),
    ...(errors > 0 ? [`${errors} connection errors`] : []),
  ]
}

/** Whether `--at-once` pairs `server` with the reference: ours only, or every server of the group. */
function atOnceWith(mode: Options['atOnce'], server: string): boolean {
  return mode === 'all' || (mode === 'ours' && server === 'ours')
}

/**
 * `partner` and the reference `base` measured at once on `scenario` (bench/at-once.ts), the one
 * whose load starts first alternating by round: the reference's CPU per request over the
 * partner's, what went wrong, and a line for the log.
 */
async function measurePairAtOnce(
  base: Running,
  partner: Running,
  scenario: Scenario,
  options: Options,
  round: number,
): Promise<{ ratio: number; faults: string[]; line: string }> {
  const pair = [base, partner] as const
  const results = await measureAtOnce(
    options.loadgen,
    [
      { baseUrl: base.server.baseUrl, group: base.server.pid },
      { baseUrl: partner.server.baseUrl, group: partner.server.pid },
    ],
    scenario,
    options.durationSeconds,
    (round % 2) as 0 | 1,
  )
  const [baseline, measured] = results
  const ratio = baseline.cpuUs / measured.cpuUs
  const faults = results.flatMap((result, i) =>
    result.unexpected + result.errors > 0
      ? [`at once: ${pair[i]?.name} gave ${result.unexpected} unexpected answers, ${result.errors} errors`]
      : [],
  )
  const line =
    `CPU per request ${base.name} ${baseline.cpuUs.toFixed(1)} µs, ${partner.name} ` +
    `${measured.cpuUs.toFixed(1)} µs: ratio ${ratio.toFixed(3)}`
  return { ratio, faults, line }
}

/**
 * Starts `specs` one at a time, each seeded and warmed up while the others sit idle (bench/README.md,
 * "Start-up"), and checks that seeding gave them all the same ids: the servers and their seeding.
 */
async function startAlone(
  specs: readonly ServerSpec[],
  serverPrefix: readonly string[],
  loadgen: Options['loadgen'],
): Promise<{ servers: Running[]; seeded: SeedResult }> {
  const servers: Running[] = []
  const seeded: SeedResult[] = []
  for (const spec of specs) {
    const running = await start(spec, serverPrefix)
    servers.push(running)
    seeded.push(await seedAndWarm(loadgen, running.server.baseUrl, KEY))
  }
  if (new Set(seeded.map((result) => result.existingId)).size > 1) throw new Error('seeding gave different ids')
  const [first] = seeded
  if (first === undefined) throw new Error('no server to bench')
  return { servers, seeded: first }
}

/**
 * Measures every scenario on every server of one group in interleaved rounds, on servers
 * started afresh for each round (`specsOf` gives their commands, a fresh database each time);
 * the first round also checks that they hold the same data and answer alike.
 */
async function benchGroup(
  name: string,
  title: string,
  reference: string,
  specsOf: () => Promise<readonly ServerSpec[]>,
  options: Options,
  serverPrefix: readonly string[],
): Promise<Group> {
  try {
    const samples = new Map<string, Measurement[]>()
    /** Per server and scenario, each round's ratio of CPU per request, the reference's over its, measured at once. */
    const together = new Map<string, number[]>()
    const togetherNotes = new Map<string, string[]>()
    const probeNotes = new Map<string, string[]>()
    const warnings: string[] = []
    const at = (server: string, scenario: ScenarioName) => `${server} ${scenario}`
    let names: string[] = []
    let scenarios: Record<ScenarioName, Scenario> | undefined
    for (let round = 0; round < options.rounds; round++) {
      const specs = await specsOf()
      names = specs.map((spec) => spec.name)
      // New processes each round, started, seeded and warmed up one at a time while the others sit idle:
      // Node processes started, or left running, beside each other on one core came out up to 30% slower for
      // good, at random (bench/README.md, "Why the comparison is fair"). A round is then what a fresh server does.
      log(
        `[${name}] round ${round + 1}/${options.rounds}: starting, seeding (${SEED_COUNT} pets), warming up ${names.join(', ')}`,
      )
      const { servers, seeded: first } = await startAlone(specs, serverPrefix, options.loadgen)
      scenarios = buildScenarios(KEY, first)
      if (round === 0) {
        const named = servers.map(({ name, server }) => ({
          name,
          baseUrl: server.baseUrl,
          hostFraming: HOST_FRAMED.has(name),
        }))
        log(`[${name}] all hold ${await compareData(named, KEY)}`)
        const differences = await compareAnswers(named, KEY, first.existingId)
        for (const [server, found] of differences) {
          for (const difference of found) warnings.push(`${server} answers unlike ${named[0]?.name}: ${difference}`)
          log(`[${name}] parity of ${server}: ${found.length === 0 ? 'same answers' : `${found.length} difference(s)`}`)
        }
      }
      for (const [index, scenarioName] of options.scenarios.entries()) {
        const scenario = scenarios[scenarioName]
        log(`[${name}] round ${round + 1}/${options.rounds}: ${scenarioName}`)
        for (const {
          name: server,
          server: { baseUrl },
        } of rotate(servers, round + index)) {
          const key = at(server, scenarioName)
          const problem = await probe(baseUrl, scenario)
          if (problem !== undefined) probeNotes.set(key, [...(probeNotes.get(key) ?? []), `probe: ${problem}`])
          await load(options.loadgen, baseUrl, scenario, WARMUP_SECONDS)
          const measurement = await load(options.loadgen, baseUrl, scenario, options.durationSeconds)
          samples.set(key, [...(samples.get(key) ?? []), measurement])
          log(
            `  ${server.padEnd(8)} ${measurement.reqPerSec.toFixed(0).padStart(7)} req/s  ` +
              `p50 ${measurement.p50Ms} ms  p99 ${measurement.p99Ms} ms  loadgen CPU ${(measurement.loadgenCpu * 100).toFixed(0)}%`,
          )
        }
      }
      for (const { server } of servers) await server.stop()
      // At once, each server with a yardstick of its own, the two started afresh and warmed up alone, one
      // after the other: paired with the round's one yardstick in turn, a server idle while that yardstick
      // ran the pairs before its own came out 10-15 points lower than paired first (Fastify's list 0.71
      // against 0.82-0.85, bench/README.md, "How to read the output"), and ours was always paired first.
      // Specs afresh for each pair too: a yardstick reopening the last pair's SQLite file would hold its pets twice.
      const partners = names.filter((server) => server !== reference && atOnceWith(options.atOnce, server))
      for (const partnerName of names.includes(reference) ? partners : []) {
        const fresh = await specsOf()
        const pairSpecs = [reference, partnerName].map((server) => fresh.find((spec) => spec.name === server))
        const { servers: pair, seeded } = await startAlone(pairSpecs as ServerSpec[], serverPrefix, options.loadgen)
        if (seeded.existingId !== first.existingId) throw new Error('seeding gave different ids')
        const [base, partner] = pair as [Running, Running]
        for (const scenarioName of options.scenarios) {
          const key = at(partner.name, scenarioName)
          const found = await measurePairAtOnce(base, partner, scenarios[scenarioName], options, round)
          together.set(key, [...(together.get(key) ?? []), found.ratio])
          if (found.faults.length > 0) togetherNotes.set(key, [...(togetherNotes.get(key) ?? []), ...found.faults])
          log(`  at once  ${scenarioName}: ${found.line}`)
        }
        for (const { server } of pair) await server.stop()
      }
    }
    if (scenarios === undefined) throw new Error('no round to bench')
    const measured = scenarios

    // Rows by scenario, then servers in the order given, so that each scenario's competitors stand together.
    const rows: Row[] = options.scenarios.flatMap((scenario) =>
      names.map((server) => {
        const rounds = samples.get(at(server, scenario)) ?? []
        const notes = [...(probeNotes.get(at(server, scenario)) ?? []), ...roundNotes(rounds, measured[scenario])]
        const row = summarize(name, server, scenario, rounds, notes)
        const paired = together.get(at(server, scenario))
        if (paired !== undefined) {
          row.atOnce = paired
          row.notes.push(...(togetherNotes.get(at(server, scenario)) ?? []))
        }
        return row
      }),
    )
    setRatios(rows, reference)
    return { name, title, reference, rows, warnings }
  } finally {
    await cleanups.run()
  }
}

/**
 * `command` with its stdout's first line (the ready line) kept for the bench and
 * the rest (the access log) written to /dev/null, as a server logging to a file
 * would, rather than into the load generator's process.
 */
function logToNull(command: readonly string[]): string[] {
  return [
    'bash',
    '-c',
    'exec "$@" | { IFS= read -r line; printf "%s\\n" "$line"; exec cat > /dev/null; }',
    'ours',
    ...command,
  ]
}

/** Ours and the peers on one store. */
async function benchStore(store: StoreName, options: Options, serverPrefix: readonly string[]): Promise<Group> {
  // A fresh database (file, schema) for every round: the servers start afresh too.
  const specsOf = async (): Promise<ServerSpec[]> => {
    const db = await prepareStore(store)
    const args = (server: ServerName) => ['--port', '0', '--key', KEY, '--db', db(server)]
    return [
      // Without its access log, as the peers run: the API against the API.
      { name: 'ours', command: [...options.ours.command, ...args('ours'), '--log', 'off'] },
      // What operating it costs, on the memory store where the server's own work shows most.
      ...(store === 'memory'
        ? [
            { name: 'ours+log', command: logToNull([...options.ours.command, ...args('ours'), '--log', 'json']) },
            {
              name: 'ours+metrics',
              command: [...options.ours.command, ...args('ours'), '--log', 'off', '--metrics-port', '0'],
            },
          ]
        : []),
      ...PEERS.map(({ name, script }) => ({ name, command: [process.execPath, script, ...args(name)] })),
      ...(store === 'memory'
        ? []
        : [{ name: ROWS_PEER.name, command: [process.execPath, ROWS_PEER.script, ...args(ROWS_PEER.name), '--rows'] }]),
    ]
  }
  const url = serverUrl(store)
  const where =
    url === undefined
      ? ''
      : ` (server ${redact(url)}, not pinned; a fresh ${store === 'postgres' ? 'schema' : 'database'})`
  const title = `${store} store${where}; ratio: vs ${REFERENCE} (node:http by hand)`
  return benchGroup(store, title, REFERENCE, specsOf, options, serverPrefix)
}

/**
 * Our fetch handler from the built package, mounted three ways, beside the binary and the
 * node:http yardstick, memory store; undefined (with a note) when the package is not built.
 */
async function benchEmbedded(
  options: Options,
  serverPrefix: readonly string[],
  notes: string[],
): Promise<Group | undefined> {
  if (!existsSync(join(ROOT, 'dist', 'index.js')) || !existsSync(join(ROOT, 'dist', 'node.js'))) {
    const note = 'embedded: skipped, the package is not built (npm run build)'
    log(note)
    notes.push(note)
    return undefined
  }
  const args = ['--port', '0', '--key', KEY, '--db', 'memory']
  const [yardstick] = PEERS
  const specs: ServerSpec[] = [
    { name: 'ours', command: [...options.ours.command, ...args, '--log', 'off'] },
    ...EMBEDDED.map(({ name, script }) => ({ name, command: [process.execPath, script, ...args] })),
    { name: yardstick.name, command: [process.execPath, yardstick.script, ...args] },
  ]
  const title = `embedded: our handler from dist/ as users mount it, memory store; ${EMBEDDED.map(({ name, what }) => `${name}: ${what}`).join('; ')}; ratio: vs ${REFERENCE} (node:http by hand)`
  return benchGroup('embedded', title, REFERENCE, async () => specs, options, serverPrefix)
}

/** Our binary on Node beside the examples on Bun and Deno, memory store; undefined when neither runtime is there. */
async function benchRuntimes(
  options: Options,
  serverPrefix: readonly string[],
  notes: string[],
): Promise<Group | undefined> {
  const { servers, skipped } = await runtimeServers(KEY)
  for (const note of skipped) {
    log(note)
    notes.push(note)
  }
  if (servers.length === 0) return undefined
  const specs: ServerSpec[] = [
    { name: 'node', command: [...options.ours.command, '--port', '0', '--key', KEY, '--db', 'memory'] },
    ...servers.map(({ name, command, env }) => ({ name, command, env })),
  ]
  const versions = [`node ${process.versions.node}`, ...servers.map(({ name, version }) => `${name} ${version}`)]
  const title = `runtimes: memory store; node: our binary, ${servers.map(({ name }) => `${name}: examples/${name}.ts`).join(', ')} (${versions.join(', ')}); ratio: vs our binary on Node`
  return benchGroup('runtimes', title, 'node', async () => specs, options, serverPrefix)
}

function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version
  } catch {
    return 'unknown'
  }
}

async function main(): Promise<void> {
  cleanups.runOnSignals((signal) => log(`bench: ${signal}, stopping servers`))
  const options = parseOptions()
  const skipped = options.groups.filter(
    (group): group is StoreName =>
      group !== 'runtimes' && group !== 'embedded' && SERVER_URL_VARIABLES[group] !== undefined && !serverUrl(group),
  )
  const groups = options.groups.filter((group) => !(skipped as string[]).includes(group))
  const notes = skipped.map(
    (store) => `${store}: skipped, no server (set ${(SERVER_URL_VARIABLES[store] ?? []).join(' or ')})`,
  )
  for (const note of notes) log(note)
  if (groups.length === 0) throw new Error('nothing to bench: every store asked for was skipped')
  const pinning = pinCpus()
  const config = {
    ours: options.ours.how,
    oursCommand: options.ours.command,
    peers: [...PEERS, ROWS_PEER].map(({ name, script, what }) => ({ name, what, command: [process.execPath, script] })),
    embedded: EMBEDDED.map(({ name, script, what }) => ({ name, what, command: [process.execPath, script] })),
    reference: REFERENCE,
    loadgen: options.loadgen,
    versions: Object.fromEntries(
      ['fastify', 'hono', '@hono/node-server', '@whatwg-node/server', 'autocannon'].map((name) => [
        name,
        packageVersion(name),
      ]),
    ),
    cpus: pinning.how,
    rounds: options.rounds,
    atOnce: options.atOnce,
    durationSeconds: options.durationSeconds,
    warmupSeconds: WARMUP_SECONDS,
    connections: CONNECTIONS,
    seedCount: SEED_COUNT,
    node: process.version,
    groups,
    skipped,
    databaseServers: Object.fromEntries(
      STORE_NAMES.flatMap((store) => {
        const url = groups.includes(store) ? serverUrl(store) : undefined
        return url === undefined ? [] : [[store, redact(url)]]
      }),
    ),
  }
  log(`ours: ${config.ours}: ${options.ours.command.join(' ')}`)
  log(`cpus: ${pinning.how}`)

  const results: Group[] = []
  for (const group of groups) {
    if (group === 'runtimes') {
      const result = await benchRuntimes(options, pinning.serverPrefix, notes)
      if (result !== undefined) results.push(result)
    } else if (group === 'embedded') {
      const result = await benchEmbedded(options, pinning.serverPrefix, notes)
      if (result !== undefined) results.push(result)
    } else {
      results.push(await benchStore(group, options, pinning.serverPrefix))
    }
  }

  const bars = barsOf(results)
  if (bars.length > 0) {
    writeFileSync(options.svg, chartSvg(bars, CHART_TITLE))
    log(`chart of the at-once ratios: ${options.svg}`)
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ config, notes, groups: results }, null, 2)}\n`)
    return
  }
  const versions = config.versions
  const header = [
    `ours: ${config.ours}`,
    ...(groups.some((group) => group !== 'runtimes')
      ? [
          `peers (plain JS run by node, bench/peers/): node-http = node:http by hand (the yardstick), fastify ${versions.fastify} with route and response schemas, hono ${versions.hono} on @hono/node-server ${versions['@hono/node-server']}; on SQL stores, node-http-rows = the yardstick with pages read as rows and written as JSON in JavaScript (the yardstick itself has the database write them, as ours does)`,
        ]
      : []),
    `load generator: ${options.loadgen === 'wrk' ? 'wrk, 1 thread' : `autocannon ${versions.autocannon}, in-process`}, ${CONNECTIONS} connections, ${options.rounds} round(s) of ${options.durationSeconds} s per server and scenario (fresh servers each round, each warmed up ${WARMUP_SECONDS} s per scenario), ${SEED_COUNT} seeded pets, node ${process.version}, ${pinning.how}`,
    "req/s, p50, p99: medians over the rounds; ratio: req/s over the reference server's; spread: (max - min) / median req/s over the rounds;",
    `loadgen CPU: the load generator's busiest round, of one core (! from 90%: the generator is the limit, the ratio is not trustworthy)`,
    ...(options.atOnce !== 'off'
      ? [
          `at once: ${options.atOnce === 'all' ? 'each server' : 'ours'} and ${REFERENCE} measured at once on one core, each under its own load generator, once per round after the rounds above; the reference's CPU per request over the server's (above 1: the server is cheaper), median over the rounds and their range (bench/at-once.ts)`,
        ]
      : []),
    ...notes,
  ]
  process.stdout.write(`\n${[header.join('\n'), ...results.map(formatGroup)].join('\n\n')}\n`)
}

main().catch(async (error: unknown) => {
  log(`bench: ${error instanceof Error ? error.message : String(error)}`)
  await cleanups.run()
  process.exit(1)
})
