// Result shapes and the plain-text table printed at the end of a run.
import type { ScenarioName } from './scenarios.js'

export const STORE_NAMES = ['memory', 'sqlite', 'postgres', 'mysql'] as const
export type StoreName = (typeof STORE_NAMES)[number]

export interface Measurement {
  /** Mean of autocannon's once-a-second samples. */
  reqPerSec: number
  /** autocannon's histogram is in whole milliseconds. */
  p99Ms: number
  requests: number
  non2xx: number
  /** Connection errors, timeouts included. */
  errors: number
}

export interface Row {
  store: StoreName
  scenario: ScenarioName
  ours: Measurement
  baseline: Measurement
  /** ours.reqPerSec / baseline.reqPerSec: above 1 means ours is faster (NaN, null in JSON, if baseline did nothing). */
  ratio: number
  /** Anything that makes this row suspect: failed probes, non-2xx replies, errors. */
  notes: string[]
}

const HEADER = ['store', 'scenario', 'ours req/s', 'ours p99 ms', 'baseline req/s', 'baseline p99 ms', 'ratio']

function cells(row: Row): string[] {
  return [
    row.store,
    row.scenario,
    row.ours.reqPerSec.toFixed(0),
    row.ours.p99Ms.toFixed(0),
    row.baseline.reqPerSec.toFixed(0),
    row.baseline.p99Ms.toFixed(0),
    Number.isFinite(row.ratio) ? `${row.ratio.toFixed(2)}x` : 'n/a',
  ]
}

/** Text columns left-aligned, numbers right-aligned; row notes and run-wide warnings listed under the table. */
export function formatTable(rows: readonly Row[], warnings: readonly string[] = []): string {
  const table = [HEADER, ...rows.map(cells)]
  const widths = HEADER.map((_, column) => Math.max(...table.map((line) => (line[column] ?? '').length)))
  const format = (line: readonly string[]): string =>
    line
      .map((cell, column) => {
        const width = widths[column] ?? 0
        return column < 2 ? cell.padEnd(width) : cell.padStart(width)
      })
      .join('  ')
      .trimEnd()
  const lines = [format(HEADER), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(cells).map(format)]
  const notes = [
    ...warnings.map((warning) => `! ${warning}`),
    ...rows.flatMap((row) => row.notes.map((note) => `! ${row.store}/${row.scenario}: ${note}`)),
  ]
  return [...lines, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n')
}
