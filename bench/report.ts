// Result shapes, the summary of a server's rounds, and the plain-text tables
// printed at the end of a run (one per store, and one for the runtimes).
import type { ScenarioName } from './scenarios.js'

export const STORE_NAMES = ['memory', 'sqlite', 'postgres', 'mysql'] as const
export type StoreName = (typeof STORE_NAMES)[number]

/**
 * Past this share of one CPU, the load generator (wrk, or autocannon in
 * this process; bench/loadgen.ts) is the bottleneck: the server might do more, so its figure and
 * ratio say more about the generator than about the server.
 */
export const LOADGEN_CPU_LIMIT = 0.9

/** One server, one scenario, one round. */
export interface Measurement {
  /** Requests answered per second (autocannon: the mean of its once-a-second samples). */
  reqPerSec: number
  /** The generator's latency percentiles, in milliseconds. */
  p50Ms: number
  p99Ms: number
  /** CPU time of the load generator (user + system, all threads) over the run's wall time; 1 = one core busy. */
  loadgenCpu: number
  requests: number
  /** Answers whose status was not the scenario's (2xx, or 401 for `unauthorized`). */
  unexpected: number
  /** Connection errors, timeouts included. */
  errors: number
}

/** One server on one scenario, over all rounds. */
export interface Row {
  /** The store (memory, sqlite, …) or `runtimes`. */
  group: string
  server: string
  scenario: ScenarioName
  /** Medians over the rounds. */
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  /** reqPerSec / the reference server's (the node:http baseline; our binary for runtimes): above 1 is faster. NaN (null in JSON) without one. */
  ratio: number
  /** (max − min) / median of reqPerSec over the rounds: how much the figure moved between rounds. */
  spread: number
  /** The highest loadgenCpu of the rounds. */
  loadgenCpu: number
  /**
   * A server paired with the reference (`--at-once`): each round's ratio of the reference's CPU
   * per request to this server's, the two measured at once on one core (bench/at-once.ts); above 1
   * is cheaper. Absent when not measured.
   */
  atOnce?: number[]
  rounds: Measurement[]
  /** Anything that makes this row suspect: failed probes, unexpected statuses, errors, a saturated load generator. */
  notes: string[]
}

export interface Group {
  name: string
  /** The line above the table. */
  title: string
  /** The server the ratios divide by. */
  reference: string
  rows: Row[]
  /** Run-wide problems for this group, such as answers that differ from ours. */
  warnings: string[]
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** A row from one server's rounds on one scenario; `ratio` is filled in once the reference's row exists. */
export function summarize(
  group: string,
  server: string,
  scenario: ScenarioName,
  rounds: Measurement[],
  notes: string[],
): Row {
  const reqPerSec = median(rounds.map((round) => round.reqPerSec))
  const rates = rounds.map((round) => round.reqPerSec)
  const loadgenCpu = Math.max(...rounds.map((round) => round.loadgenCpu))
  if (loadgenCpu >= LOADGEN_CPU_LIMIT) {
    notes.push(
      `load generator at ${percent(loadgenCpu)} CPU: it, not the server, limits this figure; ratios built on it are not trustworthy`,
    )
  }
  return {
    group,
    server,
    scenario,
    reqPerSec,
    p50Ms: median(rounds.map((round) => round.p50Ms)),
    p99Ms: median(rounds.map((round) => round.p99Ms)),
    ratio: Number.NaN,
    spread: reqPerSec > 0 ? (Math.max(...rates) - Math.min(...rates)) / reqPerSec : Number.NaN,
    loadgenCpu,
    rounds,
    notes,
  }
}

/** Sets each row's ratio to its reqPerSec over the reference server's on the same scenario. */
export function setRatios(rows: Row[], reference: string): void {
  for (const row of rows) {
    const base = rows.find((other) => other.server === reference && other.scenario === row.scenario)
    row.ratio = base !== undefined && base.reqPerSec > 0 ? row.reqPerSec / base.reqPerSec : Number.NaN
  }
}

function percent(share: number): string {
  return `${(share * 100).toFixed(0)}%`
}

/** The median of the rounds' ratios at once, and their range: `0.95x (0.93-0.97)`. */
function atOnceCell(ratios: readonly number[]): string {
  if (ratios.length === 0) return 'n/a'
  const fixed = (ratio: number) => ratio.toFixed(2)
  const range = ratios.length > 1 ? ` (${fixed(Math.min(...ratios))}-${fixed(Math.max(...ratios))})` : ''
  return `${fixed(median(ratios))}x${range}`
}

function milliseconds(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1)
}

const HEADER = ['server', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'spread', 'loadgen CPU', 'at once']
/** Columns aligned left; the others are numbers, aligned right. */
const TEXT_COLUMNS = 2

function cells(row: Row): string[] {
  return [
    row.server,
    row.scenario,
    row.reqPerSec.toFixed(0),
    milliseconds(row.p50Ms),
    milliseconds(row.p99Ms),
    Number.isFinite(row.ratio) ? `${row.ratio.toFixed(2)}x` : 'n/a',
    Number.isFinite(row.spread) ? percent(row.spread) : 'n/a',
    `${percent(row.loadgenCpu)}${row.loadgenCpu >= LOADGEN_CPU_LIMIT ? ' !' : ''}`,
    row.atOnce === undefined ? '' : atOnceCell(row.atOnce),
  ]
}

/** The group's table, a blank line between scenarios; row notes and warnings listed under it. */
export function formatGroup(group: Group): string {
  // The "at once" column only where something was measured at once (not with --at-once off).
  const columns = group.rows.some((row) => row.atOnce !== undefined) ? HEADER.length : HEADER.length - 1
  const header = HEADER.slice(0, columns)
  const body = group.rows.map((row) => cells(row).slice(0, columns))
  const widths = header.map((_, column) => Math.max(...[header, ...body].map((line) => (line[column] ?? '').length)))
  const format = (line: readonly string[]): string =>
    line
      .map((cell, column) => {
        const width = widths[column] ?? 0
        return column < TEXT_COLUMNS ? cell.padEnd(width) : cell.padStart(width)
      })
      .join('  ')
      .trimEnd()
  const lines = [group.title, '', format(header), widths.map((width) => '-'.repeat(width)).join('  ')]
  for (const [index, line] of body.entries()) {
    if (index > 0 && group.rows[index - 1]?.scenario !== group.rows[index]?.scenario) lines.push('')
    lines.push(format(line))
  }
  const notes = [
    ...group.warnings.map((warning) => `! ${warning}`),
    ...group.rows.flatMap((row) => row.notes.map((note) => `! ${row.scenario} on ${row.server}: ${note}`)),
  ]
  return [...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n')
}
