/** The group-commit queue on its own: when it writes, how much, and who hears of a failure. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PetstoreError } from '../src/index.js'
import { groupCommit } from '../src/store/sql/group-commit.js'

/** An insertMany over an array, as a database would give ids: one per row, counting up; slow when asked. */
function table(options: { delayMs?: number; refuse?: string } = {}) {
  const rows: string[] = []
  const writes: string[][] = []
  const insertMany = async (batch: readonly string[]) => {
    writes.push([...batch])
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs))
    if (batch.includes(options.refuse ?? '\0')) throw new Error(`refused ${options.refuse}`)
    return batch.map((row) => rows.push(row))
  }
  return { rows, writes, insertMany }
}

describe('groupCommit', () => {
  it('sends a lone row at once, and the rows that arrive meanwhile together in the next write', async () => {
    const { writes, insertMany } = table({ delayMs: 20 })
    const insert = groupCommit(insertMany, { canSplit: () => true })
    const first = insert('a')
    assert.deepEqual(writes, [['a']], 'written before insert() returned: no timer')
    const rest = ['b', 'c', 'd'].map(insert)
    assert.deepEqual(await Promise.all([first, ...rest]), [1, 2, 3, 4])
    assert.deepEqual(writes, [['a'], ['b', 'c', 'd']])
  })

  it('bounds a write by maxRows and maxBytes, and by take', async () => {
    const { writes, insertMany } = table({ delayMs: 5 })
    const insert = groupCommit(insertMany, { canSplit: () => true, maxRows: 3, maxBytes: 200, sizeOf: () => 100 })
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map(insert))
    assert.deepEqual(writes, [['a'], ['b', 'c'], ['d', 'e'], ['f']])
    const powers = table({ delayMs: 5 })
    const byTwos = groupCommit(powers.insertMany, { canSplit: () => true, take: (n) => 2 ** Math.floor(Math.log2(n)) })
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map(byTwos))
    assert.deepEqual(powers.writes, [['a'], ['b', 'c', 'd', 'e'], ['f', 'g'], ['h']])
  })

  it('answers 503 at once past maxQueued waiting rows, and still writes the queued ones', async () => {
    const { rows, insertMany } = table({ delayMs: 20 })
    const insert = groupCommit(insertMany, { canSplit: () => true, maxQueued: 2 })
    const accepted = [insert('a'), insert('b'), insert('c')] // 'a' is being written, 'b' and 'c' wait
    await assert.rejects(insert('d'), (error) => error instanceof PetstoreError && error.status === 503)
    assert.deepEqual(await Promise.all(accepted), [1, 2, 3])
    assert.deepEqual(rows, ['a', 'b', 'c'])
  })

  it('fails only the refused row of a batch when the failure rolled it back, and every row when it may not have', async () => {
    const split = table({ delayMs: 5, refuse: 'x' })
    const insert = groupCommit(split.insertMany, { canSplit: () => true })
    const names = ['a', 'b', 'c', 'x', 'd', 'e']
    const settled = await Promise.allSettled(names.map(insert))
    assert.deepEqual(
      settled.map((each) => each.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    )
    assert.deepEqual(split.rows, ['a', 'b', 'c', 'd', 'e'])
    const whole = table({ delayMs: 5, refuse: 'x' })
    const strict = groupCommit(whole.insertMany, { canSplit: () => false })
    const failed = await Promise.allSettled(['a', 'b', 'x', 'c'].map(strict))
    assert.deepEqual(
      failed.map((each) => each.status),
      ['fulfilled', 'rejected', 'rejected', 'rejected'],
    )
  })
})
