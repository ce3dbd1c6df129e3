/**
 * The metrics of `--workers N`, summed in the primary.
 *
 * Each worker answers the primary's scrape with its registry as JSON, over
 * the cluster's IPC channel. Between scrapes, it also sends its request
 * counts as it answers: after each turn of its event loop in which it
 * answered, what changed. The primary sums what it has, by prom-client's own
 * aggregation, and keeps two things between scrapes: what it last knew of
 * each live worker (used when it does not answer in time), and the counters
 * and histograms of the workers that died. So a counter never goes down when
 * a worker dies, even by SIGKILL, and a scrape never waits on a dead or hung
 * worker.
 *
 * @module
 */
import cluster, { type Worker } from 'node:cluster'

type PromClient = typeof import('prom-client')
type Registry = import('prom-client').Registry

/** One metric as `Registry.getMetricsAsJSON()` gives it. */
export interface MetricJson {
  name: string
  help: string
  type: string
  aggregator?: string
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[]
}
export type Snapshot = MetricJson[]

interface Ask {
  petstore: 'metrics?'
  id: number
}
interface Answer {
  petstore: 'metrics'
  id: number
  metrics?: Snapshot
}

/** A worker's request counts since it started, for the series that changed. */
interface Counts {
  petstore: 'counts'
  metrics: Snapshot
}

const isCounts = (message: unknown): message is Counts =>
  typeof message === 'object' && message !== null && (message as Counts).petstore === 'counts'
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

/**
 * In a worker: returns what to call on each answer, so that `changed()` (the counts since the
 * start of the series that changed) reaches the primary after the event-loop turn. Sent as it
 * answers, not at exit: a worker killed by SIGKILL says nothing at its end.
 */
export function reportCounts(changed: () => Snapshot): () => void {
  let due = false
  const send = () => {
    due = false
    if (process.connected) process.send?.({ petstore: 'counts', metrics: changed() } satisfies Counts)
  }
  // A graceful exit may come before the turn ends.
  process.once('exit', () => {
    if (due) send()
  })
  return () => {
    if (due) return
    due = true
    setImmediate(send)
  }
}

/** Only what a dead worker counted: its counters and histograms, which must not go down. */
const countsOf = (snapshot: Snapshot): Snapshot =>
  snapshot.filter(
    (metric) => (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator ?? 'sum') === 'sum',
  )

/** `snapshots` summed into one, series by series. */
const sum = (snapshots: Snapshot[]): Snapshot => combine(snapshots, (a, b) => a + b)

/**
 * `snapshots` of one worker's counts, taken at different times, as one: the larger of each
 * series, which is the later (a worker's counts only grow).
 */
const latest = (snapshots: Snapshot[]): Snapshot => combine(snapshots, Math.max)

/** `snapshots` into one, the values of a series (a name and its labels) combined by `by`. */
function combine(snapshots: Snapshot[], by: (a: number, b: number) => number): Snapshot {
  const byName = new Map<string, { metric: MetricJson; values: Map<string, MetricJson['values'][number]> }>()
  for (const snapshot of snapshots) {
    for (const metric of snapshot) {
      const one = byName.get(metric.name) ?? { metric, values: new Map() }
      byName.set(metric.name, one)
      for (const value of metric.values) {
        const labels = Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : 1))
        const key = `${value.metricName ?? ''} ${JSON.stringify(labels)}`
        const known = one.values.get(key)
        one.values.set(key, known ? { ...known, value: by(known.value, value.value) } : value)
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
  /** Per worker, its last answer to a scrape and the counts it sent since: what the primary knows of it. */
  const known = new Map<Worker, { scraped: Snapshot; sent: Snapshot }>()
  const knownOf = (worker: Worker) => {
    const one = known.get(worker) ?? { scraped: [], sent: [] }
    known.set(worker, one)
    return one
  }
  const view = ({ scraped, sent }: { scraped: Snapshot; sent: Snapshot }) => latest([scraped, sent])
  let departed: Snapshot = []
  const asks = new Map<number, { worker: Worker; done: (metrics?: Snapshot) => void }>()
  let nextId = 0

  cluster.on('message', (worker, message: unknown) => {
    if (isAnswer(message)) asks.get(message.id)?.done(message.metrics)
    else if (isCounts(message)) {
      const one = knownOf(worker)
      one.sent = latest([one.sent, message.metrics])
    }
  })
  cluster.on('exit', (worker) => {
    for (const ask of asks.values()) if (ask.worker === worker) ask.done()
  })
  // Its channel closed: every message it sent has been read, so what it counted is final.
  cluster.on('disconnect', (worker) => {
    const one = known.get(worker)
    known.delete(worker)
    if (one) departed = sum([departed, countsOf(view(one))])
  })

  const ask = (worker: Worker) =>
    new Promise<void>((resolve) => {
      const id = nextId++
      const timer = setTimeout(() => done(), SCRAPE_WAIT_MS)
      const done = (metrics?: Snapshot) => {
        clearTimeout(timer)
        asks.delete(id)
        // An answer from a worker already gone would count it twice: its counts are in `departed`.
        if (metrics && worker.isConnected()) knownOf(worker).scraped = metrics
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
      return prom.AggregatorRegistry.aggregate([departed, ...[...known.values()].map(view)]).metrics()
    },
    contentType: prom.prometheusContentType,
  }
}
