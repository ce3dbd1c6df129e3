// The chart of a run: each server's at-once ratio per store and scenario, as horizontal bars
// beside a line at 1.0 (the yardstick). Plain SVG text, no dependency, so that `npm run bench`
// can write it beside its tables and docs/performance.svg can be made from a run's JSON:
//
//   npm run bench -- --json > run.json && npx tsx bench/chart.ts run.json > docs/performance.svg
import { readFileSync } from 'node:fs'
import { type Group, median } from './report.js'

/** One bar: a server's median at-once ratio on one scenario of one store. */
export interface Bar {
  group: string
  scenario: string
  server: string
  value: number
}

const ROW = 22
const GAP = 10
const LABEL = 150
const WIDTH = 640
const LEGEND = 28
const COLORS = ['#2563eb', '#9ca3af', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6']

/** The bars of the rows measured at once; rows without an at-once figure are left out. */
export function barsOf(groups: readonly Group[]): Bar[] {
  return groups.flatMap((group) =>
    group.rows.flatMap((row) =>
      row.atOnce !== undefined && row.atOnce.length > 0
        ? [{ group: group.name, scenario: row.scenario, server: row.server, value: median(row.atOnce) }]
        : [],
    ),
  )
}

const xmlText = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * The SVG of `bars`, grouped by store then scenario, one colour per server. The scale runs
 * from 0 to the largest value, and at least to 1.5, so that 1.0 stands where a reader expects.
 */
export function chartSvg(bars: readonly Bar[], title: string): string {
  const servers = [...new Set(bars.map((bar) => bar.server))]
  const color = (server: string) => COLORS[servers.indexOf(server) % COLORS.length] ?? COLORS[0]
  const top = 40 + (servers.length > 1 ? LEGEND : 0)
  const plot = WIDTH - LABEL - 60
  const max = Math.max(1.5, ...bars.map((bar) => bar.value))
  const x = (value: number) => LABEL + (value / max) * plot
  const parts: string[] = []
  let y = top
  let previous: Bar | undefined
  for (const bar of bars) {
    const newScenario = previous?.group !== bar.group || previous?.scenario !== bar.scenario
    if (previous !== undefined && newScenario) y += GAP
    if (newScenario) {
      parts.push(
        `<text x="${LABEL - 8}" y="${y + 15}" text-anchor="end">${xmlText(`${bar.group} ${bar.scenario}`)}</text>`,
      )
    }
    const width = Math.max(0, x(bar.value) - LABEL).toFixed(1)
    parts.push(
      `<rect x="${LABEL}" y="${y + 3}" width="${width}" height="${ROW - 6}" fill="${color(bar.server)}"><title>${xmlText(`${bar.server}: ${bar.value.toFixed(2)}`)}</title></rect>`,
      `<text x="${(x(bar.value) + 4).toFixed(1)}" y="${y + 15}">${bar.value.toFixed(2)}</text>`,
    )
    y += ROW
    previous = bar
  }
  const height = y + 30
  const one = x(1).toFixed(1)
  const legend =
    servers.length > 1
      ? servers.map(
          (server, index) =>
            `<rect x="${LABEL + index * 120}" y="34" width="12" height="12" fill="${color(server)}"/><text x="${LABEL + index * 120 + 16}" y="45">${xmlText(server)}</text>`,
        )
      : []
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12" fill="#111827">`,
    `<title>${xmlText(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${xmlText(title)}</text>`,
    ...legend,
    ...parts,
    `<line x1="${one}" y1="${top - 4}" x2="${one}" y2="${y + 4}" stroke="#111827" stroke-dasharray="4 3"/>`,
    `<text x="${one}" y="${y + 20}" text-anchor="middle">1.0 = the yardstick (node:http by hand)</text>`,
    '</svg>',
    '',
  ].join('\n')
}

/** The default title: what the bars are. */
export const CHART_TITLE = "The yardstick's CPU per request over each server's (above 1.0: cheaper)"

// Run as a script: the chart of a `npm run bench -- --json` output file, on stdout.
if (process.argv[1]?.endsWith('chart.ts')) {
  const [file] = process.argv.slice(2)
  if (file === undefined) {
    process.stderr.write('usage: npx tsx bench/chart.ts RUN.json > chart.svg\n')
    process.exit(1)
  }
  const run = JSON.parse(readFileSync(file, 'utf8')) as { groups: Group[] }
  process.stdout.write(chartSvg(barsOf(run.groups), CHART_TITLE))
}
