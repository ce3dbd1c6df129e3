// Instructions per request: each server command run under valgrind's callgrind, seeded, warmed
// up, then its counters zeroed and a fixed number of requests sent. A count of the server's
// own user-space instructions, not of seconds: on a noisy VM, where
// req/s moves 10–20% between fresh processes of the same build, it tells a 1% change apart.
// It leaves out the kernel (the writev, the wake-ups: see bench/README.md, "What a ratio
// includes"), so it says what our code costs, and `npm run bench` what a user gets.
//
//   npm run bench:instructions -- --server "before=node .bench-before/bin/petstore-server.js --db memory --log off" \
//                                 --server "after=node dist/bin/petstore-server.js --db memory --log off" \
//                                 [--scenario get] [--warm 20000] [--requests 5000] [--connections 10] [--runs 1]
//                                 [--keep DIR]
//
// Needs valgrind (Debian's package). Each command gets `--port 0 --key KEY` and must print
// http://HOST:PORT/v1 when ready. Servers run one at a time, each afresh; the load generator is
// autocannon in this process. Compare runs of the same --connections (the interleaving of
// requests on them changes what each loop turn does), and repeat with --runs where a
// difference is small.
//
// The figure is the main thread's, the one that runs our JavaScript; all threads together
// are printed beside it. The others compile (TurboFan, concurrently) and help the GC, and
// new connections set off a wave of recompiling in Node's own code whose cost falls into
// the measurement by chance: counted with them, the same build moved by up to 7% between
// runs (2026-11-25), the main thread alone by 0.4% on an otherwise idle machine (other load
// changes the count too). The warm-up is long for the same reason: after 3,000 requests,
// our server was still compiling.

import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { autocannonRequest } from './loadgen.js'
import { median } from './report.js'
import { buildScenarios, SCENARIO_NAMES, type Scenario, type ScenarioName, seed } from './scenarios.js'
import { serverSpec, startServer } from './server-process.js'

const KEY = 'bench-key'

const { values } = parseArgs({
  options: {
    server: { type: 'string', multiple: true, default: [] },
    scenario: { type: 'string', default: 'get' },
    warm: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '10' },
    runs: { type: 'string', default: '1' },
    keep: { type: 'string' },
  },
})
const servers = values.server.map(serverSpec)
if (servers.length === 0) throw new Error('give at least one --server NAME=COMMAND')
const scenarioName = values.scenario as ScenarioName
if (!SCENARIO_NAMES.includes(scenarioName)) throw new Error(`--scenario: one of ${SCENARIO_NAMES.join(', ')}`)
const [warm, requests, connections, runs] = [values.warm, values.requests, values.connections, values.runs].map(
  Number,
) as [number, number, number, number]
if (spawnSync('valgrind', ['--version']).status !== 0)
  throw new Error('valgrind not found: apt-get install -y valgrind')

/** Sends exactly `amount` requests of `scenario`; throws on an unexpected status or a socket error. */
async function send(baseUrl: string, scenario: Scenario, amount: number): Promise<void> {
  const result = await autocannon({ ...autocannonRequest(baseUrl, scenario), connections, amount })
  const expected = result.statusCodeStats[String(scenario.status)]?.count ?? 0
  if (expected !== amount || result.errors > 0) {
    throw new Error(`${amount} requests: ${expected} answered ${scenario.status}, ${result.errors} errors`)
  }
}

interface Count {
  /** The main thread's instructions. */
  main: number
  /** Every thread's. */
  all: number
}

/** The instructions counted in the dumps callgrind wrote as `<out>.<n>-<thread>` (thread 01 is the main one). */
function dumpedInstructions(dir: string): Count {
  const count = { main: 0, all: 0 }
  for (const file of readdirSync(dir)) {
    const thread = /^cg\.out\.\d+-(\d+)$/.exec(file)?.[1]
    if (thread === undefined) continue
    const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'))
    const instructions = Number(totals?.[1] ?? 0)
    count.all += instructions
    if (thread === '01') count.main += instructions
  }
  return count
}

/** One server afresh under callgrind: instructions per request of `requests` after `warm`. */
async function measure(name: string, command: readonly string[], run: number): Promise<Count> {
  const dir =
    values.keep === undefined ? mkdtempSync(join(tmpdir(), 'petstore-callgrind-')) : join(values.keep, `${name}-${run}`)
  mkdirSync(dir, { recursive: true })
  const valgrind = [
    'valgrind',
    '--tool=callgrind',
    `--callgrind-out-file=${join(dir, 'cg.out')}`,
    '--cache-sim=no',
    '--separate-threads=yes',
  ]
  const server = await startServer(name, [...valgrind, ...command, '--port', '0', '--key', KEY], process.cwd())
  try {
    const scenario = buildScenarios(KEY, await seed(server.baseUrl, KEY))[scenarioName]
    await send(server.baseUrl, scenario, warm)
    const control = (what: string) => {
      const done = spawnSync('callgrind_control', [what, String(server.pid)], { encoding: 'utf8' })
      if (done.status !== 0) throw new Error(`callgrind_control ${what}: ${done.stderr || done.stdout}`)
    }
    control('--zero')
    await send(server.baseUrl, scenario, requests)
    control('--dump')
    const { main, all } = dumpedInstructions(dir)
    return { main: main / requests, all: all / requests }
  } finally {
    await server.stop()
    if (values.keep === undefined) rmSync(dir, { recursive: true, force: true })
  }
}

const counts = new Map<string, Count[]>(servers.map(({ name }) => [name, []]))
const figure = (value: number) => Math.round(value).toLocaleString('en')
for (let run = 1; run <= runs; run++) {
  for (const { name, command } of servers) {
    const perRequest = await measure(name, command, run)
    counts.get(name)?.push(perRequest)
    console.log(
      `run ${run}/${runs}  ${name}  ${figure(perRequest.main)} instructions/request (all threads ${figure(perRequest.all)})`,
    )
  }
}
const medianOf = (name: string, key: keyof Count) => median((counts.get(name) ?? []).map((count) => count[key]))
const first = servers[0]?.name ?? ''
console.log(
  `\n${scenarioName}: ${requests} requests after ${warm}, ${connections} connections, callgrind, main thread; medians, ratio to ${first}`,
)
for (const { name } of servers) {
  const [main, all] = [medianOf(name, 'main'), medianOf(name, 'all')]
  console.log(
    `${name}  ${figure(main)} instructions/request (${(main / medianOf(first, 'main')).toFixed(3)}); ` +
      `all threads ${figure(all)} (${(all / medianOf(first, 'all')).toFixed(3)})`,
  )
}
