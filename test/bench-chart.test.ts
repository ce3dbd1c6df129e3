/**
 * The chart `npm run bench` writes (bench/chart.ts), from a small fixed run: one bar per row
 * measured at once, its length in proportion to its ratio, the 1.0 line where 1.0 is, and
 * text escaped. The benchmark itself is not run here.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { barsOf, chartSvg } from '../bench/chart.js'
import type { Group, Row } from '../bench/report.js'

const row = (server: string, scenario: Row['scenario'], atOnce?: number[]): Row => ({
  group: 'memory',
  server,
  scenario,
  reqPerSec: 1000,
  p50Ms: 1,
  p99Ms: 2,
  ratio: 1,
  spread: 0,
  loadgenCpu: 0.5,
  atOnce,
  rounds: [],
  notes: [],
})

const groups: Group[] = [
  {
    name: 'memory',
    title: 'memory',
    reference: 'node-http',
    warnings: [],
    rows: [
      row('node-http', 'list'),
      row('ours', 'list', [0.9, 0.92, 0.88]),
      row('fastify', 'list', [0.85]),
      row('ours', 'create', [3.0]),
    ],
  },
  { name: 'sqlite', title: 'sqlite', reference: 'node-http', warnings: [], rows: [row('<ours & co>', 'get', [1.5])] },
]

/** The bars' widths, in the order drawn. */
const widths = (svg: string) =>
  [...svg.matchAll(/<rect x="150" y="[\d.]+" width="([\d.]+)" height="16"/g)].map((m) => Number(m[1]))

describe('bench/chart.ts', () => {
  it('takes the median at-once ratio of each row measured at once, and only those', () => {
    assert.deepEqual(barsOf(groups), [
      { group: 'memory', scenario: 'list', server: 'ours', value: 0.9 },
      { group: 'memory', scenario: 'list', server: 'fastify', value: 0.85 },
      { group: 'memory', scenario: 'create', server: 'ours', value: 3 },
      { group: 'sqlite', scenario: 'get', server: '<ours & co>', value: 1.5 },
    ])
  })

  it('draws one bar per row, in proportion, with the 1.0 line at 1.0', () => {
    const svg = chartSvg(barsOf(groups), 'A title')
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" [^>]*>\n/)
    assert.match(svg, /<\/svg>\n$/)
    const drawn = widths(svg)
    assert.equal(drawn.length, 4)
    // The scale runs to the largest value, 3.0: 430 px of plot.
    assert.deepEqual(drawn, [129, 121.8, 430, 215])
    assert.match(svg, /<line x1="293\.3"/, 'the 1.0 line a third of the way')
    for (const label of ['0.90', '0.85', '3.00', '1.50', 'memory list', 'memory create', 'sqlite get']) {
      assert.ok(svg.includes(`>${label}<`), `${label} is written`)
    }
    assert.ok(!svg.includes('NaN'))
  })

  it('escapes names, and keeps 1.0 inside the scale when every ratio is small', () => {
    const svg = chartSvg([{ group: 'g', scenario: 's', server: '<a & b>', value: 0.5 }], 'x < y')
    assert.ok(svg.includes('&lt;a &amp; b&gt;') && svg.includes('x &lt; y'))
    assert.ok(!/<[^/a-z!]/.test(svg.replace(/<\/?[a-z]+[ >/]/g, '')), 'no stray "<"')
    // Scale to 1.5: the bar of 0.5 is a third of the plot.
    assert.deepEqual(widths(svg), [143.3])
  })
})
