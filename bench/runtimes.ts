// The same API on Node, Bun and Deno: the programs of examples/ (memory store,
// each runtime's own server: node:http through the adapter, Bun.serve, Deno.serve)
// under one load, list `?limit=20` over 1000 pets. Ratios are against Node, measured
// in the same run. A runtime that is not installed is skipped with the reason.
//
//   npx tsx bench/runtimes.ts [--duration 5]      (npm run bench -- --only runtimes)
import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { bunRuntime, denoRuntime, locate } from '../test/helpers/runtimes.js'
import { type RunningServer, type ScriptRuntime, startScript } from '../test/helpers/spawn-server.js'

const KEY = 'bench-key'
const PETS = 1000
const STATUSES = ['available', 'pending', 'sold', undefined] as const

export interface RuntimeRow {
  runtime: string
  version: string
  requestsPerSecond: number
  p99Ms: number
  ratio: number
}

/** Pins a running server to CPU 0, where taskset exists (the load generator stays on the other core). */
function pin(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    execFileSync('taskset', ['-cp', '0', String(pid)], { stdio: 'ignore' })
  } catch {
    // No taskset: unpinned numbers are noisier, not wrong.
  }
}

async function seed(origin: string): Promise<void> {
  for (let i = 0; i < PETS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const status = STATUSES[(i + j) % STATUSES.length]
        const res = await fetch(`${origin}/v1/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `pet ${i + j}`, categoryId: i + j, ...(status && { status }) }),
        })
        if (res.status !== 201) throw new Error(`seeding ${origin}: ${res.status} ${await res.text()}`)
      }),
    )
  }
}

async function measure(server: RunningServer, durationSeconds: number) {
  const options = {
    url: `${server.origin}/v1/pets?limit=20`,
    connections: 50,
    headers: { authorization: `Bearer ${KEY}` },
  }
  await autocannon({ ...options, duration: 1 }) // warm-up
  const result = await autocannon({ ...options, duration: durationSeconds })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`)
  return { requestsPerSecond: Math.round(result.requests.average), p99Ms: result.latency.p99 }
}

/** Starts each runtime's example in turn, seeds it, and measures list. */
export async function benchRuntimes(durationSeconds: number, log = (line: string) => console.error(line)) {
  const runtimes: Array<{ name: string; script: string; runtime?: ScriptRuntime; version: string }> = [
    { name: 'node', script: 'examples/node.ts', version: process.versions.node },
  ]
  for (const name of ['bun', 'deno'] as const) {
    const found = await locate(name)
    if ('skip' in found) {
      log(`runtimes: ${name} skipped: ${found.skip}`)
      continue
    }
    const runtime =
      name === 'bun' ? bunRuntime(found.binary) : denoRuntime(found.binary, ['--allow-net', '--allow-env'])
    runtimes.push({ name, script: `examples/${name}.ts`, runtime, version: found.version })
  }
  const rows: RuntimeRow[] = []
  for (const { name, script, runtime, version } of runtimes) {
    log(`runtimes: ${name} ${version}`)
    const server = await startScript(script, [], { PORT: '0', PETSTORE_KEY: KEY }, runtime)
    try {
      pin(server.child.pid)
      await seed(server.origin)
      const { requestsPerSecond, p99Ms } = await measure(server, durationSeconds)
      const base = rows[0]?.requestsPerSecond ?? requestsPerSecond
      rows.push({ runtime: name, version, requestsPerSecond, p99Ms, ratio: requestsPerSecond / base })
    } finally {
      await server.stop()
    }
  }
  return rows
}

/** The rows as a table. */
export function formatRuntimes(rows: readonly RuntimeRow[]): string {
  const lines = ['runtime  version   list req/s  p99 ms  vs node', '-------  --------  ----------  ------  -------']
  for (const row of rows) {
    lines.push(
      `${row.runtime.padEnd(7)}  ${row.version.padEnd(8)}  ${String(row.requestsPerSecond).padStart(10)}  ` +
        `${String(row.p99Ms).padStart(6)}  ${row.ratio.toFixed(2).padStart(6)}x`,
    )
  }
  return lines.join('\n')
}

if (process.argv[1]?.endsWith('runtimes.ts')) {
  const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' } } })
  const rows = await benchRuntimes(Number(values.duration))
  console.log(formatRuntimes(rows))
  process.exit(0)
}
