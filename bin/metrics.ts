/**
 * `--metrics-port N`: Prometheus metrics on a listener of their own, so that
 * a port published for the API never exposes them by accident. prom-client
 * is loaded only when the flag is given (an optional dependency).
 *
 * Under `--workers N` the numbers are aggregated: every worker counts in
 * prom-client's global registry, and the primary asks each worker over the
 * cluster's IPC channel and sums (bin/cluster-metrics.ts): one series per
 * label set, whichever worker answered, and the dead workers' counts kept.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { OnResponse, PoolStats } from '../src/for-binary.js'
import type { PetStore } from '../src/index.js'
import { answerScrapes, clusterMetrics, type MetricJson, reportCounts } from './cluster-metrics.js'

type PromClient = typeof import('prom-client')
type Metric = import('prom-client').Metric

async function promClient(): Promise<PromClient> {
  try {
    const loaded = (await import('prom-client')) as PromClient & { default?: PromClient }
    return loaded.default ?? loaded
  } catch {
    throw new Error('--metrics-port needs the prom-client package: npm install prom-client')
  }
}

/** Request metrics of one serving process, on prom-client's global registry. */
export interface RequestMetrics {
  /** Counts and times every answered request. */
  onResponse: OnResponse
  /** Counts the requests in flight on `server`. */
  watch(server: Server): void
  /** The registry's text, for the metrics listener of a single process. */
  text(): Promise<string>
  contentType: string
}

/** Seconds: from a fast memory answer to a database at its limits. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Creates the metrics: `http_requests_total` and `http_request_duration_seconds`
 * by method, route and status; `http_requests_in_flight`; `petstore_errors_total`
 * by Error code for 5xx (store failures are `internal_error` and `unavailable`);
 * `petstore_faults_total` by kind for injected faults (they count in the others too);
 * `petstore_db_pool_connections` where the store has a pool; the process defaults.
 *
 * @example
 * ```ts
 * const metrics = await requestMetrics(store, inWorker)
 * createPetstore({ store, keys, onResponse: metrics.onResponse })
 * ```
 */
export async function requestMetrics(store: PetStore, inWorker = false): Promise<RequestMetrics> {
  const prom = await promClient()
  const { register } = prom
  if (inWorker) answerScrapes(register)
  prom.collectDefaultMetrics()
  const series = new RequestSeries()
  // Counted per request in plain numbers and handed to prom-client at a scrape: prom-client builds and
  // checks a key from the labels on every inc() and observe(), children included, which cost the binary
  // a fifth of a small answer's throughput (bench, ours+metrics).
  new prom.Counter({
    name: REQUESTS.name,
    help: REQUESTS.help,
    labelNames: ['method', 'route', 'status_code'],
    collect() {
      // Each series' count is the counter's value: set afresh at every scrape.
      this.reset()
      for (const { labels, count } of series.all()) this.inc(labels, count)
    },
  })
  register.registerMetric(series.histogram() as unknown as Metric)
  // A plain number too, read at a scrape: a Gauge's inc() and dec() key their (empty) labels on every call.
  let inFlight = 0
  new prom.Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests being answered',
    collect() {
      this.set(inFlight)
    },
  })
  const errors = new LabelCounts(ERRORS, 'code')
  const faults = new LabelCounts(FAULTS, 'kind')
  for (const counts of [errors, faults]) {
    new prom.Counter({
      ...counts.metric,
      labelNames: [counts.label],
      collect() {
        this.reset()
        for (const [value, count] of counts.all()) this.inc({ [counts.label]: value }, count)
      },
    })
  }
  // Under --workers, the primary hears of every answer as it goes: a worker killed keeps its counts.
  const counted = inWorker ? reportCounts(() => [...series.changed(), errors.json(), faults.json()]) : undefined
  const poolStats = (store as { poolStats?: () => PoolStats | undefined }).poolStats
  if (poolStats) {
    new prom.Gauge({
      name: 'petstore_db_pool_connections',
      help: 'Database pool connections (pg.Pool totalCount, idleCount, waitingCount)',
      labelNames: ['state'],
      collect() {
        const stats = poolStats()
        if (!stats) return
        for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, stats[state])
      },
    })
  }
  return {
    onResponse(info) {
      // The method as a label only when it is one of HTTP's: a client can send any token, and each would be a series.
      const method = KNOWN_METHODS.has(info.method) ? info.method : 'other'
      series.observe(method, info.route ?? 'unmatched', info.status, info.durationMs / 1000)
      if (info.status >= 500) errors.inc(info.code ?? 'unknown')
      if (info.fault !== undefined) faults.inc(info.fault)
      counted?.()
    },
    watch(server) {
      // One listener for every answer, not a closure per request.
      const answered = () => {
        inFlight--
      }
      server.on('request', (_request, response) => {
        inFlight++
        response.on('close', answered)
      })
    },
    text: () => register.metrics(),
    contentType: register.contentType,
  }
}

/** The name and help of a counter, as the registry and the primary's sums show them. */
interface MetricName {
  name: string
  help: string
}
const REQUESTS: MetricName = { name: 'http_requests_total', help: 'Answered requests' }
const DURATIONS: MetricName = {
  name: 'http_request_duration_seconds',
  help: 'Time from a request reaching the handler to its answer being ready',
}
const ERRORS: MetricName = {
  name: 'petstore_errors_total',
  help: 'Answers with a 5xx status, by Error code (internal_error: the store failed; unavailable: 503)',
}
const FAULTS: MetricName = {
  name: 'petstore_faults_total',
  help: 'Injected faults (--faults, Prefer: fault=KIND), by kind',
}

/** A counter of one label (an Error code, a fault kind), in plain numbers: few values, all sent each time. */
class LabelCounts {
  private readonly counts = new Map<string, number>()

  constructor(
    readonly metric: MetricName,
    readonly label: string,
  ) {}

  inc(value: string): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1)
  }

  all(): Iterable<[string, number]> {
    return this.counts
  }

  /** As the registry's JSON gives it. */
  json(): MetricJson {
    const values = [...this.counts].map(([value, count]) => ({ value: count, labels: { [this.label]: value } }))
    return { ...this.metric, type: 'counter', aggregator: 'sum', values }
  }
}

/** One label set of the request metrics: its counts since the start. */
interface Series {
  labels: { method: string; route: string; status_code: string }
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  buckets: number[]
  count: number
  sum: number
}

/**
 * The requests by method, route and status: the counter's increments and
 * the duration histogram, kept in plain numbers. The histogram is exposed as a
 * metric of prom-client's registry (the shape its own histograms give), so
 * the text format and the workers' aggregation are prom-client's.
 */
class RequestSeries {
  private readonly byKey = new Map<string, Series>()
  /** The series observed since {@link changed} last ran. */
  private readonly dirty = new Set<Series>()

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`
    let one = this.byKey.get(key)
    if (one === undefined) {
      one = {
        labels: { method, route, status_code: String(status) },
        buckets: new Array<number>(BUCKETS.length + 1).fill(0),
        count: 0,
        sum: 0,
      }
      this.byKey.set(key, one)
    }
    let bucket = 0
    while (bucket < BUCKETS.length && seconds > (BUCKETS[bucket] as number)) bucket++
    one.buckets[bucket] = (one.buckets[bucket] as number) + 1
    one.count++
    one.sum += seconds
    this.dirty.add(one)
  }

  all(): Iterable<Series> {
    return this.byKey.values()
  }

  /** The counter and the histogram of the series observed since the last call, as the registry's JSON. */
  changed(): MetricJson[] {
    const series = [...this.dirty]
    this.dirty.clear()
    const counts = series.map(({ labels, count }) => ({ labels, value: count }))
    return [
      { ...REQUESTS, type: 'counter', aggregator: 'sum', values: counts },
      { ...DURATIONS, type: 'histogram', aggregator: 'sum', values: series.flatMap(histogramValues) },
    ]
  }

  /** `http_request_duration_seconds`, as the registry reads a metric. */
  histogram() {
    const { name, help } = DURATIONS
    const read = () => ({
      name,
      help,
      type: 'histogram',
      values: [...this.byKey.values()].flatMap(histogramValues),
      aggregator: 'sum',
    })
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => read(),
      reset: () => this.byKey.clear(),
    }
  }
}

/** One series' values of the duration histogram: its cumulative buckets, sum and count. */
function histogramValues({ labels, buckets, count, sum }: Series): MetricJson['values'] {
  const name = DURATIONS.name
  const values: MetricJson['values'] = []
  let cumulative = 0
  for (let i = 0; i < buckets.length; i++) {
    cumulative += buckets[i] as number
    const le = i < BUCKETS.length ? (BUCKETS[i] as number) : '+Inf'
    values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative })
  }
  values.push({ metricName: `${name}_sum`, labels, value: sum })
  values.push({ metricName: `${name}_count`, labels, value: count })
  return values
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'])

/** The primary's view under `--workers`: every worker's global registry, summed (bin/cluster-metrics.ts). */
export async function aggregatedMetrics(): Promise<Pick<RequestMetrics, 'text' | 'contentType'>> {
  return clusterMetrics(await promClient())
}

/**
 * Serves `GET /metrics` on `port` (0: a free one) and `host`; resolves with
 * the port bound. Anything else is a 404. The listener does not keep the
 * process alive on its own.
 */
export async function serveMetrics(
  metrics: Pick<RequestMetrics, 'text' | 'contentType'>,
  port: number,
  host: string,
): Promise<number> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?', 1)[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found; try GET /metrics\n')
      return
    }
    metrics.text().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  server.unref()
  return (server.address() as AddressInfo).port
}
