// A/B of a few server commands on one scenario: req/s, p99 and the server's own CPU time
// per request, each as a ratio to the first command's in the same run. For a change to our
// code (the built binary before and after, from two dist copies) or for an experiment on a
// peer (bench/spin.mjs adds work to one). `npm run bench` is the full comparison; this is
// the quick, focused one.
//
//   npm run bench:ab -- --server "before=node .before/bin/petstore-server.js --db memory --log off" \
//                       --server "after=node dist/bin/petstore-server.js --db memory --log off" \
//                       [--scenario list] [--rounds 3] [--duration 4]
//
// Each command gets `--port 0 --key KEY` and must print http://HOST:PORT/v1 when ready (the
// binary and the peers do). As in `npm run bench`, every round starts each server afresh,
// one at a time, pinned to CPU 0, seeded and warmed up alone (bench/README.md, "Start-up");
// then each, in an order that rotates, gets 2 s of warm-up on the scenario and the
// measurement, wrk (or autocannon) on CPU 1. CPU per request is the server's process group's
// user + system time over the measurement (Linux /proc), divided by the requests answered.
import { readdirSync, readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { defaultLoadgen, LOADGEN_NAMES, type LoadgenName, load, seedAndWarm, WARMUP_SECONDS } from './loadgen.js'
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

/** User + system seconds of every process in group `group` (the server, and any wrapper it runs under). */
function groupCpuSeconds(group: number): number {
  const tick = 100 // USER_HZ on Linux
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // Fields after the command's closing parenthesis: state ppid pgrp … utime (12th) stime (13th).
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ').at(-1)?.split(' ') ?? []
      if (Number(fields[2]) === group) total += (Number(fields[11]) + Number(fields[12])) / tick
    } catch {
      // The process ended while we looked.
    }
  }
  return total
}

interface Figures {
  reqPerSec: number
  p99Ms: number
  cpuUs: number
}
const figures = servers.map((): Figures[] => [])

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
  for (const i of order) {
    const server = running[i] as (typeof running)[number]
    const measured = scenario as NonNullable<typeof scenario>
    await load(loadgen, server.baseUrl, measured, WARMUP_SECONDS)
    const before = groupCpuSeconds(server.group)
    const result = await load(loadgen, server.baseUrl, measured, seconds)
    const cpuUs = ((groupCpuSeconds(server.group) - before) * 1e6) / result.requests
    if (result.unexpected > 0 || result.errors > 0) {
      throw new Error(`${servers[i]?.name}: ${result.unexpected} unexpected answers, ${result.errors} errors`)
    }
    figures[i]?.push({ reqPerSec: result.reqPerSec, p99Ms: result.p99Ms, cpuUs })
    console.log(
      `round ${round + 1}/${rounds}  ${servers[i]?.name}  ${Math.round(result.reqPerSec)} req/s  ` +
        `p99 ${result.p99Ms.toFixed(2)} ms  CPU ${cpuUs.toFixed(1)} µs/request`,
    )
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
