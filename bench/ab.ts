// A/B of a few server commands on one scenario: req/s, p99 and the server's own CPU time
// per request, each as a ratio to the first command's in the same run. For a change to our
// code (the built binary before and after, from two dist copies) or for an experiment on a
// peer (bench/spin.mjs adds work to one). `npm run bench` is the full comparison; this is
// the quick, focused one.
//
//   npm run bench:ab -- --server "before=node .before/bin/petstore-server.js --db memory --log off" \
//                       --server "after=node dist/bin/petstore-server.js --db memory --log off" \
//                       [--scenario list] [--rounds 3] [--duration 4] [--at-once]
//
// Each command gets `--port 0 --key KEY` and must print http://HOST:PORT/v1 when ready (the
// binary and the peers do). As in `npm run bench`, every round starts each server afresh,
// one at a time, pinned to CPU 0, seeded and warmed up alone (bench/README.md, "Why the comparison is fair");
// then each, in an order that rotates, gets 2 s of warm-up on the scenario and the
// measurement, wrk (or autocannon) on CPU 1. CPU per request is the server's process group's
// user + system time over the measurement (Linux /proc), divided by the requests answered.
//
// --at-once (two servers): each round measures both at once instead, each under its own load
// generator, the one started first alternating (bench/at-once.ts). Their ratio of CPU per
// request then holds within 1-3%, where one after the other it scatters by 10-30 points on these
// machines; the per-round ratios, their median and mean ± standard error, are printed last.
import { parseArgs } from 'node:util'
import { measureAlone, measureAtOnce } from './at-once.js'
import { defaultLoadgen, LOADGEN_NAMES, type LoadgenName, type load, seedAndWarm } from './loadgen.js'
import { pinCpus } from './pinning.js'
import { median } from './report.js'
import { buildScenarios, SCENARIO_NAMES, type ScenarioName } from './scenarios.js'
import { serverSpec, startServer } from './server-process.js'

const KEY = 'bench-key'

const { values } = parseArgs({
  options: {
    server: { type: 'string', multiple: true, default: [] },
    scenario: { type: 'string', default: 'list' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
    loadgen: { type: 'string' },
    'at-once': { type: 'boolean', default: false },
  },
})
const servers = values.server.map(serverSpec)
if (servers.length < 2) throw new Error('give at least two --server NAME=COMMAND')
const scenarioName = values.scenario as ScenarioName
if (!SCENARIO_NAMES.includes(scenarioName)) throw new Error(`--scenario: one of ${SCENARIO_NAMES.join(', ')}`)
const loadgen = (values.loadgen ?? defaultLoadgen()) as LoadgenName
if (!LOADGEN_NAMES.includes(loadgen)) throw new Error(`--loadgen: one of ${LOADGEN_NAMES.join(', ')}`)
const rounds = Number(values.rounds)
const seconds = Number(values.duration)
const pinning = pinCpus()
const atOnce = values['at-once']
if (atOnce && servers.length !== 2) throw new Error('--at-once measures two servers: give exactly two --server')

interface Figures {
  reqPerSec: number
  p99Ms: number
  cpuUs: number
}
const figures = servers.map((): Figures[] => [])

function record(i: number, result: Awaited<ReturnType<typeof load>>, cpuUs: number): void {
  if (result.unexpected > 0 || result.errors > 0) {
    throw new Error(`${servers[i]?.name}: ${result.unexpected} unexpected answers, ${result.errors} errors`)
  }
  figures[i]?.push({ reqPerSec: result.reqPerSec, p99Ms: result.p99Ms, cpuUs })
  console.log(
    `round ${figures[i]?.length}/${rounds}  ${servers[i]?.name}  ${Math.round(result.reqPerSec)} req/s  ` +
      `p99 ${result.p99Ms.toFixed(2)} ms  CPU ${cpuUs.toFixed(1)} µs/request`,
  )
}

for (let round = 0; round < rounds; round++) {
  const order = servers.map((_, i) => (i + round) % servers.length)
  const running: Array<{ baseUrl: string; group: number; stop(): Promise<void> }> = []
  let scenario: ReturnType<typeof buildScenarios>[ScenarioName] | undefined
  for (const i of order) {
    const { name, command } = servers[i] as (typeof servers)[number]
    const server = await startServer(name, [...pinning.serverPrefix, ...command, '--port', '0', '--key', KEY], '.')
    scenario = buildScenarios(KEY, await seedAndWarm(loadgen, server.baseUrl, KEY))[scenarioName]
    running[i] = { baseUrl: server.baseUrl, group: server.pid, stop: server.stop }
  }
  const measured = scenario as NonNullable<typeof scenario>
  if (atOnce) {
    const [a, b] = running as [(typeof running)[number], (typeof running)[number]]
    const both = await measureAtOnce(loadgen, [a, b], measured, seconds, (round % 2) as 0 | 1)
    for (const [i, result] of both.entries()) record(i, result, result.cpuUs)
  } else {
    for (const i of order) {
      const result = await measureAlone(loadgen, running[i] as (typeof running)[number], measured, seconds)
      record(i, result, result.cpuUs)
    }
  }
  await Promise.all(running.map((server) => server.stop()))
}

const of = (i: number, key: keyof Figures) => median((figures[i] ?? []).map((figure) => figure[key]))
console.log(
  `\n${scenarioName}, ${rounds} round(s) of ${seconds} s, ${loadgen}, ${pinning.how}; medians, ratio to ${servers[0]?.name}`,
)
const width = Math.max(...servers.map(({ name }) => name.length))
servers.forEach(({ name }, i) => {
  const ratio = (key: keyof Figures) => (of(i, key) / of(0, key)).toFixed(3)
  console.log(
    `${name.padEnd(width)}  ${Math.round(of(i, 'reqPerSec'))} req/s (${ratio('reqPerSec')})  ` +
      `CPU ${of(i, 'cpuUs').toFixed(1)} µs/request (${ratio('cpuUs')})  p99 ${of(i, 'p99Ms').toFixed(2)} ms`,
  )
})

// Per round, where both were measured in the same round: the ratio of CPU per request to the first's.
const perRound = (i: number) =>
  (figures[i] ?? []).map((figure, round) => figure.cpuUs / (figures[0]?.[round]?.cpuUs ?? Number.NaN))
servers.slice(1).forEach(({ name }, index) => {
  const ratios = perRound(index + 1)
  const mean = ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length
  const se = Math.sqrt(
    ratios.reduce((sum, ratio) => sum + (ratio - mean) ** 2, 0) / (ratios.length - 1) / ratios.length,
  )
  console.log(
    `${name}: CPU per request over ${servers[0]?.name}'s, per round: ${ratios.map((ratio) => ratio.toFixed(3)).join(' ')}; ` +
      `median ${median(ratios).toFixed(3)}, mean ${mean.toFixed(3)} ± ${Number.isFinite(se) ? se.toFixed(3) : 'n/a'}`,
  )
})
