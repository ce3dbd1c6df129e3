/**
 * The metrics of `--workers N`, summed in the primary.
 *
 * Each worker answers the primary's scrape with its registry as JSON, over
 * the cluster's IPC channel. The primary sums what it has, by prom-client's
 * own aggregation, and keeps two things between scrapes: each live worker's
 * last answer (used when it does not answer in time), and the counters and
 * histograms of the workers that died. So a counter never goes down when a
 * worker dies, and a scrape never waits on a dead or hung worker.
 *
 * @module
 */
import cluster, { type Worker } from 'node:cluster'

type PromClient = typeof import('prom-client')
type Registry = import('prom-client').Registry

/** One metric as `Registry.getMetricsAsJSON()` gives it. */
interface MetricJson {
  name: string
  help: string
  type: string
  aggregator?: string
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[]
}
type Snapshot = MetricJson[]

interface Ask {
  petstore: 'metrics?'
  id: number
}
interface Answer {
  petstore: 'metrics'
  id: number
  metrics?: Snapshot
}

const isAsk = (message: unknown): message is Ask =>
  typeof message === 'object' && message !== null && (message as Ask).petstore === 'metrics?'
const isAnswer = (message: unknown): message is Answer =>
  typeof message === 'object' && message !== null && (message as Answer).petstore === 'metrics'

/** How long a scrape waits for a live worker; one that is late counts with its last answer. */
const SCRAPE_WAIT_MS = 2_000

/**
 * In a worker: answers the primary's scrapes with `registry` as JSON.
 *
 * @example
 * ```ts
 * if (inWorker) answerScrapes(prom.register)
 * ```
 */
export function answerScrapes(registry: Registry): void {
  process.on('message', (message: unknown) => {
    if (!isAsk(message)) return
    const reply = (metrics?: Snapshot) => {
      // A worker on its way out may have lost the channel: the primary then uses what it knew.
      if (process.connected) process.send?.({ petstore: 'metrics', id: message.id, metrics } satisfies Answer)
    }
    registry.getMetricsAsJSON().then(
      (metrics) => reply(metrics as unknown as Snapshot),
      () => reply(),
    )
  })
}

/** Only what a dead worker counted: its counters and histograms, which must not go down. */
const countsOf = (snapshot: Snapshot): Snapshot =>
  snapshot.filter(
    (metric) => (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator ?? 'sum') === 'sum',
  )

/** `snapshots` summed into one, series by series. */
function sum(snapshots: Snapshot[]): Snapshot {
  const byName = new Map<string, { metric: MetricJson; values: Map<string, MetricJson['values'][number]> }>()
  for (const snapshot of snapshots) {
    for (const metric of snapshot) {
      const one = byName.get(metric.name) ?? { metric, values: new Map() }
      byName.set(metric.name, one)
      for (const value of metric.values) {
        const labels = Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : 1))
        const key = `${value.metricName ?? ''} ${JSON.stringify(labels)}`
        const known = one.values.get(key)
        one.values.set(key, known ? { ...known, value: known.value + value.value } : value)
      }
    }
  }
  return [...byName.values()].map(({ metric, values }) => ({ ...metric, values: [...values.values()] }))
}

/**
 * In the primary: the workers' metrics summed, for `GET /metrics`.
 *
 * @example
 * ```ts
 * const metrics = clusterMetrics(await import('prom-client'))
 * const text = await metrics.text()
 * ```
 */
export function clusterMetrics(prom: PromClient): { text(): Promise<string>; contentType: string } {
  const last = new Map<Worker, Snapshot>()
  let departed: Snapshot = []
  const asks = new Map<number, { worker: Worker; done: (metrics?: Snapshot) => void }>()
  let nextId = 0

  cluster.on('message', (_worker, message: unknown) => {
    if (isAnswer(message)) asks.get(message.id)?.done(message.metrics)
  })
  cluster.on('exit', (worker) => {
    for (const ask of asks.values()) if (ask.worker === worker) ask.done()
    const known = last.get(worker)
    last.delete(worker)
    if (known) departed = sum([departed, countsOf(known)])
  })

  const ask = (worker: Worker) =>
    new Promise<void>((resolve) => {
      const id = nextId++
      const timer = setTimeout(() => done(), SCRAPE_WAIT_MS)
      const done = (metrics?: Snapshot) => {
        clearTimeout(timer)
        asks.delete(id)
        // An answer from a worker already gone would count it twice: its counts are in `departed`.
        if (metrics && !worker.isDead()) last.set(worker, metrics)
        resolve()
      }
      asks.set(id, { worker, done })
      try {
        worker.send({ petstore: 'metrics?', id } satisfies Ask)
      } catch {
        done()
      }
    })

  return {
    async text() {
      const live = Object.values(cluster.workers ?? {}).filter(
        (worker): worker is Worker => worker?.isConnected() === true,
      )
      await Promise.all(live.map(ask))
      return prom.AggregatorRegistry.aggregate([departed, ...last.values()]).metrics()
    },
    contentType: prom.prometheusContentType,
  }
}
