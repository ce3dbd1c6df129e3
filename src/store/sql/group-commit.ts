/**
 * Group commit: creates that arrive while a write is in flight wait for it,
 * and the next write takes all of them, in one transaction and one commit.
 * Written once here; each SQL store plugs in its `insertMany(rows) → ids`.
 *
 * @module
 */

import { PetstoreError } from '../../shared/petstore-error.js'
import { afterTurn } from '../../util/after-turn.js'

/**
 * Inserts `rows` atomically (all of them or none), under the store's
 * commit-order lock, and gives their ids in the order of `rows`. May answer
 * synchronously (SQLite) or with a promise.
 */
export type InsertMany<Row> = (rows: readonly Row[]) => readonly number[] | Promise<readonly number[]>

/** Bounds of a {@link groupCommit} queue. */
export interface GroupCommitOptions<Row> {
  /** Most rows in one write. @default 256 */
  maxRows?: number
  /** Most bytes (as `sizeOf` counts them) in one write; a single larger row still goes alone. @default 1 MiB */
  maxBytes?: number
  /** Most creates waiting for a write; beyond, a create fails at once with 503. @default 4096 */
  maxQueued?: number
  /** The size of a row in bytes, roughly. @default 64 */
  sizeOf?: (row: Row) => number
  /** How many of `ready` rows the next write takes (MySQL takes powers of two: one statement text each). @default all */
  take?: (ready: number) => number
  /**
   * Whether a failed write of several rows may be split and its halves tried
   * again: only when the failure says the transaction rolled back (a constraint,
   * bad data). A lost connection may have committed: that batch fails as a whole.
   */
  canSplit: (error: unknown) => boolean
}

interface Waiting<Row> {
  row: Row
  bytes: number
  resolve: (id: number) => void
  reject: (error: unknown) => void
}

/**
 * A queue that turns single inserts into group commits. A lone row goes out at
 * once (no timer): batching happens only when writes overlap. Each caller is
 * answered after the commit holding its row, with its own id; a row that the
 * database rejects fails only its own caller (a failing batch is split in
 * halves until the bad row stands alone).
 *
 * @example
 * ```ts
 * const insert = groupCommit((rows) => rows.map(insertOne), { canSplit: () => true })
 * const id = await insert({ name: 'Rex' })
 * ```
 */
export function groupCommit<Row>(
  insertMany: InsertMany<Row>,
  options: GroupCommitOptions<Row>,
): (row: Row) => Promise<number> {
  const { maxRows = 256, maxBytes = 1 << 20, maxQueued = 4096, sizeOf = () => 64, take, canSplit } = options
  const queue: Array<Waiting<Row>> = []
  let writing = false

  /** Whether the last write answered synchronously (SQLite): see {@link drain}. */
  let synchronous = false

  /** Writes `batch` and settles each of its callers; splits it on a failure that rolled everything back. */
  async function write(batch: Array<Waiting<Row>>): Promise<void> {
    let ids: readonly number[]
    try {
      const written = insertMany(batch.map((each) => each.row))
      synchronous = !(written instanceof Promise)
      ids = await written
    } catch (error) {
      if (batch.length === 1 || !canSplit(error)) {
        for (const each of batch) each.reject(error)
        return
      }
      const half = batch.length >> 1
      await write(batch.slice(0, half))
      await write(batch.slice(half))
      return
    }
    batch.forEach((each, index) => {
      const id = ids[index]
      if (id === undefined) each.reject(new Error('group commit: the insert returned fewer ids than rows'))
      else each.resolve(id)
    })
  }

  /** The next batch off the queue, within the bounds. */
  function nextBatch(): Array<Waiting<Row>> {
    let count = Math.min(queue.length, maxRows)
    if (take) count = Math.max(1, Math.min(count, take(count)))
    let bytes = queue[0]!.bytes
    let end = 1
    while (end < count && bytes + queue[end]!.bytes <= maxBytes) bytes += queue[end++]!.bytes
    return queue.splice(0, end)
  }

  /** Writes batches while rows wait; a synchronous write keeps the queue busy to the end of the turn. */
  function drain(): void {
    if (queue.length === 0) {
      writing = false
      return
    }
    writing = true
    const done = write(nextBatch())
    done.then(() => {
      // A synchronous write is over before the other requests of this turn of the event loop are read:
      // their creates queue up behind it and go together at the end of the turn. An asynchronous
      // write spanned turns, so whatever could queue behind it has: the next batch goes at once, and
      // with none waiting the queue is idle at once, without a turn of the event loop for nothing.
      if (synchronous) afterTurn(drain)
      else drain()
    })
  }

  return (row) =>
    new Promise<number>((resolve, reject) => {
      if (queue.length >= maxQueued) {
        reject(PetstoreError.unavailable(new Error(`too many creates waiting to be written (${maxQueued})`)))
        return
      }
      queue.push({ row, bytes: sizeOf(row), resolve, reject })
      if (!writing) drain()
    })
}
