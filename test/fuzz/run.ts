/**
 * `npm run fuzz [-- --runs N] [--store memory|sqlite] [--seed S]`: the fuzz
 * campaign of test/fuzz.test.ts at full length, 10,000 hostile requests per
 * store by default, with a random seed printed at the start and on failure
 * so that any failure can be replayed. Exits 1 on a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { formatStatuses, runCampaign } from './campaign.js'
import type { StoreKind } from './property.js'

const USAGE = 'usage: npm run fuzz -- [--runs N (10000)] [--store memory|sqlite (both)] [--seed S (random)]'

function options() {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, store: { type: 'string' }, seed: { type: 'string' } },
  })
  const runs = Number(values.runs ?? 10_000)
  const seed = values.seed === undefined ? (Math.random() * 2 ** 31) | 0 : Number(values.seed)
  const stores = values.store === undefined ? ['memory', 'sqlite'] : [values.store]
  if (
    !Number.isSafeInteger(runs) ||
    runs < 1 ||
    !Number.isSafeInteger(seed) ||
    stores.some((s) => !/^(memory|sqlite)$/.test(s))
  ) {
    throw new Error(USAGE)
  }
  return { runs, seed, stores: stores as StoreKind[] }
}

async function main(): Promise<number> {
  const { runs, seed, stores } = options()
  const replay = (kind: StoreKind) => `npm run fuzz -- --store ${kind} --runs ${runs} --seed ${seed}`
  console.log(`fuzz: seed ${seed}, ${runs} hostile requests per store (${stores.join(', ')})`)
  const unhandled: unknown[] = []
  process.on('unhandledRejection', (reason) => unhandled.push(reason))
  const dir = mkdtempSync(join(tmpdir(), 'petstore-fuzz-'))
  try {
    for (const kind of stores) {
      const result = await runCampaign({ kind, runs, seed, dir })
      const seconds = (result.ms / 1000).toFixed(1)
      console.log(`${kind}: ${result.requests} requests, ${result.creates} creates in ${seconds} s`)
      console.log(`  answers: ${formatStatuses(result.statuses)}`)
      if (result.failure) {
        console.error(`\n${kind}: FAILED with seed ${seed}\n${result.failure}\n\nreplay: ${replay(kind)}`)
        return 1
      }
      if (unhandled.length > 0) {
        console.error(`${kind}: ${unhandled.length} unhandled rejection(s) with seed ${seed}:`, unhandled[0])
        console.error(`replay: ${replay(kind)}`)
        return 1
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`fuzz: passed (seed ${seed})`)
  return 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(1)
  },
)
