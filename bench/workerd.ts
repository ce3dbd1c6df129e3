// The example Cloudflare Worker on workerd (miniflare, local D1) beside the same handler on Node
// with SQLite (our binary, `--db sqlite:`), each under a short autocannon run: list, get, create.
// Two rounds, alternating, so a busy machine weighs on both alike; ratios are workerd / Node.
//
//   npm run bench:workerd -- [seconds per run, default 5]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { repoRoot } from '../test/helpers/spawn-server.js'
import { bundleWorker, exampleEntry, startWorkers, wranglerConfig } from '../test/helpers/workerd.js'
import { startServer } from './server-process.js'

const KEY = 'bench-key'
const seconds = Number(process.argv[2] ?? 5)
const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-workerd-'))
const auth = { authorization: `Bearer ${KEY}` }

const bundle = await bundleWorker(exampleEntry())
const workerd = await startWorkers(
  [{ name: 'petstore', code: bundle.code, d1Databases: { DB: 'bench' }, bindings: { PETSTORE_API_KEYS: KEY } }],
  wranglerConfig().compatibility_date,
)
const node = await startServer(
  'node + sqlite',
  [
    process.execPath,
    '--import',
    'tsx',
    'bin/petstore-server.ts',
    '--port',
    '0',
    '--db',
    `sqlite:${join(dir, 'pets.db')}`,
    '--key',
    KEY,
  ],
  repoRoot,
)
const targets = { workerd: `${workerd.url.origin}/v1`, node: node.baseUrl }
console.log(
  `bundle ${bundle.bytes} B minified, ${bundle.gzipBytes} B gzipped; workerd ready in ${workerd.startMs.toFixed(0)} ms`,
)

try {
  // 100 pets in each, so a list answers a full page of 20.
  for (const base of Object.values(targets)) {
    for (let i = 0; i < 100; i++) {
      const response = await fetch(`${base}/pets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `pet ${i}`, categoryId: i, status: 'available' }),
      })
      if (response.status !== 201) throw new Error(`${base}: seeding answered ${response.status}`)
    }
  }
  const scenarios = {
    // No store call: what a request costs workerd (and miniflare's entry Worker) by itself.
    openapi: { path: '/openapi.json', method: 'GET' },
    list: { path: '/pets?limit=20', method: 'GET' },
    get: { path: '/pets/50', method: 'GET' },
    create: { path: '/pets', method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) },
  } as const
  const results: Record<string, Record<string, Array<{ rps: number; p50: number; p99: number }>>> = {}
  for (let round = 1; round <= 2; round++) {
    for (const [scenario, { path, method, ...rest }] of Object.entries(scenarios)) {
      for (const [name, base] of Object.entries(targets)) {
        const result = await autocannon({
          url: `${base}${path}`,
          method,
          headers: { ...auth, 'content-type': 'application/json' },
          body: 'body' in rest ? rest.body : undefined,
          connections: 10,
          duration: seconds,
        })
        if (result.errors > 0 || result.non2xx > 0) {
          throw new Error(`${name} ${scenario}: ${result.errors} errors, ${result.non2xx} non-2xx`)
        }
        const row = { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
        results[scenario] ??= {}
        results[scenario][name] ??= []
        results[scenario][name].push(row)
        console.log(
          `round ${round} ${scenario} ${name}: ${row.rps.toFixed(0)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms`,
        )
      }
    }
  }
  console.log('\nscenario | workerd + D1 req/s | node + SQLite req/s | workerd / node (each round)')
  for (const [scenario, byTarget] of Object.entries(results)) {
    const w = byTarget.workerd ?? []
    const n = byTarget.node ?? []
    const ratios = w.map((run, i) => (run.rps / (n[i]?.rps ?? Number.NaN)).toFixed(2))
    const show = (runs: typeof w) => runs.map((run) => run.rps.toFixed(0)).join(' / ')
    console.log(`${scenario} | ${show(w)} | ${show(n)} | ${ratios.join(' / ')}`)
  }
} finally {
  await node.stop()
  await workerd.miniflare.dispose()
  rmSync(dir, { recursive: true, force: true })
}
