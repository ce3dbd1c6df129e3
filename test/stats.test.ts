/**
 * The binary's diagnostic stats line (`PETSTORE_STATS_INTERVAL_MS`), which
 * `npm run soak` reads: its live heap is the heap right after a full collection.
 *
 * Run: node --import tsx --test test/stats.test.ts
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import type { Stats } from '../bin/stats.js'

/** Runs `script` (ES module, may import ../bin/stats.ts) in a child with `--expose-gc`; the stats lines it printed. */
function statsLinesOf(script: string): Stats[] {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: new URL('.', import.meta.url).pathname,
    encoding: 'utf8',
    timeout: 20_000,
  })
  assert.equal(child.status, 0, child.stderr)
  return child.stderr
    .split('\n')
    .flatMap((line) => /^petstore-server stats (\{.*\})$/.exec(line)?.[1] ?? [])
    .map((json) => JSON.parse(json) as Stats)
}

test('the stats line: live heap null before a full collection, then the heap that survived the last one', () => {
  const lines = statsLinesOf(`
    import { printStatsEvery } from '../bin/stats.ts'
    import { setTimeout as sleep } from 'node:timers/promises'
    printStatsEvery(100)
    const keep = setInterval(() => {}, 1_000)
    await sleep(250)
    // 40 MiB held across a full collection, then let go and collected again; a line comes out after each.
    let held = Array.from({ length: 40 }, () => new Array(128 * 1024).fill(1.5))
    gc()
    await sleep(250)
    held = undefined
    gc()
    await sleep(250)
    clearInterval(keep)
  `)
  // Lines come by the clock, so they are found by what they say, in order.
  const holding = lines.findIndex((line) => line.liveHeapMiB !== null && line.liveHeapMiB >= 40)
  assert.ok(holding > 0, `no line holding 40 MiB: ${JSON.stringify(lines)}`)
  assert.equal(lines[0]?.liveHeapMiB, null, 'no full collection before the first line')
  const released = lines.slice(holding).find((line) => line.liveHeapMiB !== null && line.liveHeapMiB < 20)
  assert.ok(released, `no line after the release: ${JSON.stringify(lines)}`)
})
