/**
 * A diagnostic line on stderr every so often, for soak runs and operators:
 * memory, heap, event-loop delay and open file descriptors, as one JSON
 * object. Off unless `PETSTORE_STATS_INTERVAL_MS` is set.
 *
 * @module
 */
import { readdirSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { GCProfiler } from 'node:v8'

/** The line's fields: sizes in MiB, delays in ms. */
export interface Stats {
  rssMiB: number
  heapUsedMiB: number
  /** The JavaScript heap reserved, and memory outside it that JS objects hold (Buffers). */
  heapTotalMiB: number
  externalMiB: number
  /**
   * The heap in use right after the latest full (mark-compact) collection: what
   * the process really holds. Heap used and heap total swing with garbage not yet
   * collected and with the reserve sized for the allocation rate; a leak moves
   * this one. Null until a full collection has run.
   */
  liveHeapMiB: number | null
  loopDelayP99Ms: number
  /** Open file descriptors (Linux), or -1 where /proc is missing. */
  fds: number
}

const MiB = 2 ** 20

/** Prints `petstore-server stats {…}` on stderr every `intervalMs`; the delay percentile is over that interval. */
export function printStatsEvery(intervalMs: number): void {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  // Restarted each interval, so it holds one interval's collections only.
  let gcs = new GCProfiler()
  gcs.start()
  let liveHeap: number | null = null
  const timer = setInterval(() => {
    const full = gcs.stop().statistics.findLast((gc) => gc.gcType === 'MarkSweepCompact')
    if (full) liveHeap = full.afterGC.heapStatistics.usedHeapSize
    gcs = new GCProfiler()
    gcs.start()
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage()
    let fds = -1
    try {
      fds = readdirSync('/proc/self/fd').length
    } catch {}
    const stats: Stats = {
      rssMiB: round(rss / MiB),
      heapUsedMiB: round(heapUsed / MiB),
      heapTotalMiB: round(heapTotal / MiB),
      externalMiB: round(external / MiB),
      liveHeapMiB: liveHeap === null ? null : round(liveHeap / MiB),
      loopDelayP99Ms: round(delay.percentile(99) / 1e6),
      fds,
    }
    delay.reset()
    process.stderr.write(`petstore-server stats ${JSON.stringify(stats)}\n`)
  }, intervalMs)
  timer.unref()
}

const round = (value: number) => Math.round(value * 10) / 10
