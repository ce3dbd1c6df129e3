/**
 * The Prometheus text format, parsed strictly, for the metrics tests.
 *
 * @module
 */
import assert from 'node:assert/strict'

/** One sample line: `name{label="value",…} number`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/**
 * The Prometheus text format, parsed strictly: every line is `# HELP`, `# TYPE` or a sample
 * `name{label="value",…} number`; anything else fails. Returns the samples.
 */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue
    // prom-client writes NaN as `Nan` (its event-loop lag before a first sample); Prometheus reads either.
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|Nan|[+-]Inf)$/.exec(line)
    assert.ok(match, `not Prometheus text: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    const pairs = match[2] ?? ''
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y
    while (label.lastIndex < pairs.length) {
      const pair = label.exec(pairs)
      assert.ok(pair, `bad labels: ${pairs}`)
      labels[pair[1] ?? ''] = pair[2] ?? ''
    }
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) })
  }
  return samples
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))
    .reduce((sum, sample) => sum + sample.value, 0)
}
