// Instructions per request: each server command run under valgrind's callgrind, seeded, warmed
// up, then its counters zeroed and a fixed number of requests sent. A count of the server's
// own user-space instructions, not of seconds: on a noisy VM, where
// req/s moves 10–20% between fresh processes of the same build, it tells a 1% change apart.
// It leaves out the kernel (the writev, the wake-ups), so it says what our code costs, and
// `npm run bench` what a user gets.
//
//   npm run bench:instructions -- --server "before=node .bench-before/bin/petstore-server.js --db memory --log off" \
//                                 --server "after=node dist/bin/petstore-server.js --db memory --log off" \
//                                 [--scenario get] [--warm 20000] [--requests 5000] [--connections 10] [--runs 1]
//                                 [--keep DIR] [--cache-sim]
//
// --cache-sim adds valgrind's simulated caches and branch predictor (about twice as slow): the
// main thread's first-level instruction- and data-cache misses and its mispredicted branches per
// request, which weigh 10-15 cycles each where an instruction weighs about one.
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
    'cache-sim': { type: 'boolean', default: false },
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
  /** With --cache-sim, the main thread's: first-level instruction-cache misses (I1mr)… */
  i1Misses?: number
  /** …first-level data-cache misses, read and write (D1mr + D1mw)… */
  d1Misses?: number
  /** …and mispredicted branches, conditional and indirect (Bcm + Bim). */
  mispredicted?: number
}

/** The events of one dump's totals line, by name (`Ir`, `D1mr`…), from its `events:` line. */
function dumpEvents(text: string): Record<string, number> {
  const names = /^events: (.+)$/m.exec(text)?.[1]?.split(' ') ?? ['Ir']
  const totals = /^(?:totals|summary): (.+)$/m.exec(text)?.[1]?.split(' ') ?? []
  return Object.fromEntries(names.map((name, i) => [name, Number(totals[i] ?? 0)]))
}

/** What callgrind counted in the dumps it wrote as `<out>.<n>-<thread>` (thread 01 is the main one). */
function dumpedCounts(dir: string): Count {
  const count: Count = { main: 0, all: 0 }
  for (const file of readdirSync(dir)) {
    const thread = /^cg\.out\.\d+-(\d+)$/.exec(file)?.[1]
    if (thread === undefined) continue
    const events = dumpEvents(readFileSync(join(dir, file), 'utf8'))
    count.all += events.Ir ?? 0
    if (thread !== '01') continue
    count.main += events.Ir ?? 0
    // Summed over the main thread's dumps, as its instructions are.
    if (events.D1mr !== undefined) {
      count.i1Misses = (count.i1Misses ?? 0) + (events.I1mr ?? 0)
      count.d1Misses = (count.d1Misses ?? 0) + events.D1mr + (events.D1mw ?? 0)
      count.mispredicted = (count.mispredicted ?? 0) + (events.Bcm ?? 0) + (events.Bim ?? 0)
    }
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
    `--cache-sim=${values['cache-sim'] ? 'yes' : 'no'}`,
    `--branch-sim=${values['cache-sim'] ? 'yes' : 'no'}`,
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
    const counted = dumpedCounts(dir)
    const perRequest = (value: number | undefined) => (value === undefined ? undefined : value / requests)
    return {
      main: counted.main / requests,
      all: counted.all / requests,
      i1Misses: perRequest(counted.i1Misses),
      d1Misses: perRequest(counted.d1Misses),
      mispredicted: perRequest(counted.mispredicted),
    }
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
const medianOf = (name: string, key: keyof Count) =>
  median((counts.get(name) ?? []).map((count) => count[key] ?? Number.NaN))
const first = servers[0]?.name ?? ''
console.log(
  `\n${scenarioName}: ${requests} requests after ${warm}, ${connections} connections, callgrind, main thread; medians, ratio to ${first}`,
)
/** A median per request and its ratio to the first server's. */
const figured = (name: string, key: keyof Count) =>
  `${figure(medianOf(name, key))} (${(medianOf(name, key) / medianOf(first, key)).toFixed(3)})`
for (const { name } of servers) {
  console.log(`${name}  ${figured(name, 'main')} instructions/request; all threads ${figured(name, 'all')}`)
  if (values['cache-sim']) {
    console.log(
      `${' '.repeat(name.length)}  I1 misses ${figured(name, 'i1Misses')}, D1 misses ${figured(name, 'd1Misses')}, ` +
        `mispredicted branches ${figured(name, 'mispredicted')}`,
    )
  }
}
