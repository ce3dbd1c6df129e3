// The load generators of bench/run.ts: wrk (Debian's `wrk` package) when it is
// on PATH, else autocannon in this process.
//
// Why wrk first: autocannon in-process saturates its core near 75k req/s on
// the bench machine, so the fast scenarios (get, the 401) measured the
// generator, not the server. wrk is C with an event loop per thread: one
// thread on the generator's core drives well over twice that, so it is never
// the limit here. It runs with one thread (the generator has one core: more
// threads there would only share it) and the same 50 connections as
// autocannon. Requests are set by a Lua script written per scenario (method,
// headers, body); its `done` prints the count, the duration, the p50 and p99
// of wrk's latency distribution and the error counts as one JSON line.
// wrk inherits this process's CPU pinning (the generator's core). Its CPU use
// is measured by the shell that runs it (`times`: the children's user and
// system time).
//
// wrk counts an answer with a status of 400 or more as a status error and
// reads no other statuses: for the 2xx scenarios the errors are the
// unexpected answers; for the 401 scenario, every answer must be one (the
// probe before the run checks the exact status and body).
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import autocannon, { type Options as AutocannonOptions } from 'autocannon'
import type { Measurement } from './report.js'
import { buildScenarios, type Scenario, type SeedResult, seed } from './scenarios.js'

export const LOADGEN_NAMES = ['wrk', 'autocannon'] as const
export type LoadgenName = (typeof LOADGEN_NAMES)[number]

/** Open connections, as many for either generator. */
export const CONNECTIONS = 50
/** wrk threads: the generator has one core. */
const WRK_THREADS = 1

/**
 * wrk when it runs here, else autocannon, said on stderr: a run on autocannon reads its own
 * core's limit on the fastest rows, and that is easy to miss once the run has begun.
 */
export function defaultLoadgen(): LoadgenName {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return 'wrk'
  } catch (error) {
    // wrk --version exits 1 after printing its version: it is there.
    if ((error as { status?: number }).status === 1) return 'wrk'
    console.error(
      '! wrk is not on PATH (Debian: apt-get install -y wrk): autocannon drives the load in-process, and its core, not the server, limits the fastest rows',
    )
    return 'autocannon'
  }
}

/**
 * How long a server is warmed up: alone once it is seeded, then on each scenario before it is
 * measured. V8 takes a few thousand requests to optimize a server's hot paths; 1 s was not always enough.
 */
export const WARMUP_SECONDS = 2

/**
 * Seeds a server just started and warms it up on the list, while the other servers sit
 * idle: started or warmed beside each other, Node processes came out up to 30% slower at
 * random (bench/README.md, "Why the comparison is fair"). Returns the seed, for the scenarios' ids.
 */
export async function seedAndWarm(generator: LoadgenName, baseUrl: string, key: string): Promise<SeedResult> {
  const seeded = await seed(baseUrl, key)
  await load(generator, baseUrl, buildScenarios(key, seeded).list, WARMUP_SECONDS)
  return seeded
}

/** One run of `seconds` against `baseUrl` with the scenario's request. */
export function load(
  generator: LoadgenName,
  baseUrl: string,
  scenario: Scenario,
  seconds: number,
): Promise<Measurement> {
  return generator === 'wrk' ? wrk(baseUrl, scenario, seconds) : autocannonLoad(baseUrl, scenario, seconds)
}

/** What autocannon sends for `scenario` to the server at `baseUrl`. */
export function autocannonRequest(baseUrl: string, { request }: Scenario): AutocannonOptions {
  return {
    url: `${baseUrl}${request.path}`,
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  }
}

/** autocannon in-process, with this process's CPU use over the run. */
async function autocannonLoad(baseUrl: string, scenario: Scenario, seconds: number): Promise<Measurement> {
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const result = await autocannon({
    ...autocannonRequest(baseUrl, scenario),
    connections: CONNECTIONS,
    duration: seconds,
  })
  const cpu = process.cpuUsage(cpuBefore)
  const wallMs = performance.now() - started
  const answered = Object.values(result.statusCodeStats).reduce((sum, { count }) => sum + count, 0)
  return {
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    loadgenCpu: (cpu.user + cpu.system) / 1000 / wallMs,
    requests: result.requests.total,
    unexpected: answered - (result.statusCodeStats[String(scenario.status)]?.count ?? 0),
    errors: result.errors,
  }
}

/** A Lua string literal. */
const lua = (text: string) => `"${text.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n')}"`

/** The wrk script of a scenario: its request, and a `done` that prints the figures as JSON. */
function wrkScript(scenario: Scenario): string {
  const { method, headers, body } = scenario.request
  return [
    `wrk.method = ${lua(method)}`,
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`),
    ...(body === undefined ? [] : [`wrk.body = ${lua(body)}`]),
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'\\nWRK-JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect, e.read, e.write, e.timeout))',
    'end',
    '',
  ].join('\n')
}

interface WrkFigures {
  requests: number
  durationUs: number
  p50Us: number
  p99Us: number
  status: number
  connect: number
  read: number
  write: number
  timeout: number
}

/** wrk run by bash, whose `times` then prints the CPU time of its children (wrk) on the last line. */
async function wrk(baseUrl: string, scenario: Scenario, seconds: number): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-wrk-'))
  try {
    const script = join(dir, 'scenario.lua')
    writeFileSync(script, wrkScript(scenario))
    const args = ['-t', String(WRK_THREADS), '-c', String(CONNECTIONS), '-d', `${seconds}s`, '--timeout', '10s']
    const started = performance.now()
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        'bash',
        ['-c', 'wrk "$@" && times', 'wrk', ...args, '-s', script, `${baseUrl}${scenario.request.path}`],
        { maxBuffer: 1 << 20 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`wrk failed: ${stderr || error.message}`)) : resolve(stdout),
      )
    })
    const wallMs = performance.now() - started
    const json = /WRK-JSON (\{.*\})/.exec(output)?.[1]
    if (json === undefined) throw new Error(`wrk printed no figures: ${output.slice(0, 400)}`)
    const figures = JSON.parse(json) as WrkFigures
    // `times`: the shell's user and system time, then its children's ("0m1.234s 0m0.056s").
    const children = output.trim().split('\n').at(-1) ?? ''
    const cpuSeconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce(
      (sum, [, minutes, secs]) => sum + Number(minutes) * 60 + Number(secs),
      0,
    )
    const expectsRefusal = scenario.status >= 400
    return {
      reqPerSec: figures.requests / (figures.durationUs / 1e6),
      p50Ms: figures.p50Us / 1000,
      p99Ms: figures.p99Us / 1000,
      loadgenCpu: (cpuSeconds * 1000) / wallMs,
      requests: figures.requests,
      unexpected: expectsRefusal ? figures.requests - figures.status : figures.status,
      errors: figures.connect + figures.read + figures.write + figures.timeout,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
