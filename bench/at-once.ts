// Two servers measured at once: both on the servers' core, each under its own load generator,
// over the same seconds. Each one's CPU time per request (its process group's user + system
// time, Linux /proc) is then measured under the same conditions as the other's: whatever slows
// the machine down in those seconds (other tenants of the host, its caches) slows both.
//
// Why: on these VMs one server's CPU time per request moves by up to 2x between 1-second
// windows of one run (22.6 to 50.8 µs for the yardstick's list, 2026-11-26), so the ratio of two
// servers measured one after the other scatters by 10-30 points from round to round. Measured at
// once, the same two servers' ratio of CPU per request moved by 1-3% (standard deviation) between
// 5-second windows, and the yardstick against itself came out at 0.99-1.00 (bench/README.md,
// "At once").
//
// The ratio is of CPU per request, not of req/s: the scheduler's split of the core between the
// two drifts, and the requests each gets through follow it; the CPU each spends on a request
// does not. A server alone and saturated answers 1 / (CPU per request) requests a second, so the
// ratio stands for the req/s ratio of the two measured alone, without the noise. Latency means
// nothing here (each waits while the other runs): p50 and p99 come from the rounds alone.
import { readdirSync, readFileSync } from 'node:fs'
import { type LoadgenName, load, WARMUP_SECONDS } from './loadgen.js'
import type { Measurement } from './report.js'
import type { Scenario } from './scenarios.js'

/** User + system seconds of every process in group `group` (the server, and any wrapper it runs under). */
export function groupCpuSeconds(group: number): number {
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

/** A server to measure: where to send the load, and its process group. */
export interface Target {
  baseUrl: string
  group: number
}

/** One server's share of a measurement at once. */
export interface AtOnce extends Measurement {
  /** Its process group's CPU time per request answered, in microseconds. */
  cpuUs: number
}

/**
 * Loads `pair` at once with `scenario` (a warm-up, then `seconds` measured) and returns each
 * one's figures, in the order given. The load generators are started in the order of `first`
 * then the other, so that a caller alternating it between rounds gives neither the head start.
 */
export async function measureAtOnce(
  loadgen: LoadgenName,
  pair: readonly [Target, Target],
  scenario: Scenario,
  seconds: number,
  first: 0 | 1 = 0,
): Promise<[AtOnce, AtOnce]> {
  const order = first === 0 ? [pair[0], pair[1]] : [pair[1], pair[0]]
  await Promise.all(order.map((target) => load(loadgen, target.baseUrl, scenario, WARMUP_SECONDS)))
  const before = pair.map((target) => groupCpuSeconds(target.group))
  const [early, late] = order.map((target) => load(loadgen, target.baseUrl, scenario, seconds)) as [
    Promise<Measurement>,
    Promise<Measurement>,
  ]
  const loaded = await Promise.all(first === 0 ? [early, late] : [late, early])
  return loaded.map((measurement, i) => withCpu(measurement, pair[i] as Target, before[i] ?? 0)) as [AtOnce, AtOnce]
}

/** One server alone, as `npm run bench:ab` measures it without --at-once: a warm-up, then `seconds` measured. */
export async function measureAlone(
  loadgen: LoadgenName,
  target: Target,
  scenario: Scenario,
  seconds: number,
): Promise<AtOnce> {
  await load(loadgen, target.baseUrl, scenario, WARMUP_SECONDS)
  const before = groupCpuSeconds(target.group)
  return withCpu(await load(loadgen, target.baseUrl, scenario, seconds), target, before)
}

/** `measurement` with the CPU per request its target's group spent since `before` (its CPU seconds then). */
function withCpu(measurement: Measurement, target: Target, before: number): AtOnce {
  const spent = groupCpuSeconds(target.group) - before
  return { ...measurement, cpuUs: measurement.requests > 0 ? (spent * 1e6) / measurement.requests : Number.NaN }
}
