/**
 * The request journal of `--workers N`: one journal for all workers,
 * gathered when it is read, as the metrics are.
 *
 * Each worker records into its own journal. A read reaches one worker; it
 * asks the primary, which asks every live worker for its part (over the
 * cluster's IPC channel), merges them in id order and answers. Ids hold the
 * time and the worker's slot (see `Journal`), so they are unique and
 * increasing across workers, and `since` works on the merged journal. A clear
 * (or a reset) clears every worker's. Journals are keyed by a scope: `''` for
 * the server's own, so that a namespace's can be gathered the same way.
 *
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import { PetstoreError } from '../src/index.js'
import type { Journal, JournalCount, JournalFilter, JournalPage, JournalPart, JournalReader } from '../src/testing.js'

type Read = 'requests' | 'count' | 'clear'

/** A worker asks the primary for a read of the merged journal. */
interface Ask {
  petstore: 'journal?'
  ask: number
  scope: string
  read: Read
  filter: JournalFilter
}
/** The primary's answer: `undefined` when a worker did not answer in time. */
interface Answer {
  petstore: 'journal'
  ask: number
  result?: JournalPage | JournalCount | null
}
/** The primary asks each worker for its part (or to clear). */
interface PartAsk {
  petstore: 'journal-part?'
  ask: number
  scope: string
  read: Read
  filter: JournalFilter
}
interface PartAnswer {
  petstore: 'journal-part'
  ask: number
  part?: JournalPart<JournalEntryOrId> | null
}
type JournalEntryOrId = JournalPage['requests'][number] | number

const is =
  <T extends { petstore: string }>(kind: T['petstore']) =>
  (message: unknown): message is T =>
    typeof message === 'object' && message !== null && (message as T).petstore === kind
const isAsk = is<Ask>('journal?')
const isAnswer = is<Answer>('journal')
const isPartAsk = is<PartAsk>('journal-part?')
const isPartAnswer = is<PartAnswer>('journal-part')

/** How long the primary waits for each worker's part; a worker asks a little longer. */
const GATHER_WAIT_MS = 2_000
const ASK_WAIT_MS = 5_000

const incomplete = () =>
  new PetstoreError(503, 'unavailable', 'A worker did not answer in time: the journal read would miss its requests')

/**
 * In a worker: answers the primary's asks for the part of the journal of each scope. `journals`
 * gives the journal of a scope (`''`, the server's own).
 */
export function answerJournalAsks(journals: (scope: string) => Journal | undefined): void {
  process.on('message', (message: unknown) => {
    if (!isPartAsk(message)) return
    const journal = journals(message.scope)
    let part: PartAnswer['part'] = null
    if (journal !== undefined) {
      if (message.read === 'clear') journal.clear()
      else part = message.read === 'count' ? journal.part(message.filter, true) : journal.part(message.filter)
    }
    if (process.connected) process.send?.({ petstore: 'journal-part', ask: message.ask, part } satisfies PartAnswer)
  })
}

/** In a worker: the reader of the merged journal of `scope`, which the journal's routes and the reset use. */
export function clusterReader(scope: string): JournalReader {
  const waiting = new Map<number, (result: Answer['result']) => void>()
  let next = 0
  process.on('message', (message: unknown) => {
    if (isAnswer(message)) waiting.get(message.ask)?.(message.result)
  })
  const ask = (read: Read, filter: JournalFilter = {}) =>
    new Promise<NonNullable<Answer['result']>>((resolve, reject) => {
      const id = next++
      const timer = setTimeout(() => done(undefined), ASK_WAIT_MS)
      const done = (result: Answer['result']) => {
        clearTimeout(timer)
        waiting.delete(id)
        if (result === undefined) reject(incomplete())
        else resolve(result as NonNullable<Answer['result']>)
      }
      waiting.set(id, done)
      process.send?.({ petstore: 'journal?', ask: id, scope, read, filter } satisfies Ask)
    })
  return {
    requests: (filter) => ask('requests', filter) as Promise<JournalPage>,
    count: (filter) => ask('count', filter) as Promise<JournalCount>,
    clear: () => ask('clear').then(() => undefined),
  }
}

/** In the primary: answers the workers' reads, by gathering every live worker's part. */
export async function gatherJournals(): Promise<void> {
  const { mergeParts } = await import('../src/testing.js')
  const asks = new Map<number, { worker: Worker; done: (part?: PartAnswer['part']) => void }>()
  let next = 0

  const partOf = (worker: Worker, message: Ask) =>
    new Promise<PartAnswer['part'] | undefined>((resolve) => {
      const id = next++
      const timer = setTimeout(() => done(), GATHER_WAIT_MS)
      const done = (part?: PartAnswer['part']) => {
        clearTimeout(timer)
        asks.delete(id)
        resolve(part)
      }
      asks.set(id, { worker, done })
      const { scope, read, filter } = message
      try {
        worker.send({ petstore: 'journal-part?', ask: id, scope, read, filter } satisfies PartAsk)
      } catch {
        done()
      }
    })

  const answer = async (from: Worker, message: Ask) => {
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true)
    const parts = await Promise.all(live.map((worker) => partOf(worker, message)))
    let result: Answer['result']
    if (parts.includes(undefined)) result = undefined
    else if (message.read === 'clear') result = null
    else {
      const given = parts.filter((part): part is JournalPart<JournalEntryOrId> => part != null)
      const { matching, kept, recorded } = mergeParts(given, message.filter)
      const evicted = recorded - kept
      result =
        message.read === 'count'
          ? { count: matching.length, evicted }
          : { requests: matching as JournalPage['requests'], evicted }
    }
    if (from.isConnected()) from.send({ petstore: 'journal', ask: message.ask, result } satisfies Answer)
  }

  cluster.on('message', (worker, message: unknown) => {
    if (isPartAnswer(message)) asks.get(message.ask)?.done(message.part)
    else if (isAsk(message)) void answer(worker, message)
  })
  cluster.on('exit', (worker) => {
    // A worker gone has no part to give: its entries went with it.
    for (const ask of asks.values()) if (ask.worker === worker) ask.done(null)
  })
}
