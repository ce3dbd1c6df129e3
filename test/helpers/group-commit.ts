/**
 * Group commit's failure rule, checked over HTTP: one row of a batch that the
 * database rejects fails only its own create.
 */
import assert from 'node:assert/strict'
import { createPetstore, type PetStore } from '../../src/index.js'
import { call, KEY } from './client.js'

/** The name the test's trigger or constraint makes the database refuse. */
export const REJECTED_NAME = 'rejected-by-the-database'

/**
 * Sends 40 creates at once to `store`, the 17th named {@link REJECTED_NAME}
 * (which the database refuses): that one gets a 5xx Error, the other 39 a 201
 * with their own pet, stored, with distinct ids. `store` must already refuse
 * the name. Returns the ids of the stored pets.
 */
export async function assertOneBadRowFailsAlone(store: PetStore): Promise<number[]> {
  const handler = createPetstore({ store, keys: [KEY], onError: () => {} })
  const names = Array.from({ length: 40 }, (_, index) => (index === 16 ? REJECTED_NAME : `batch-${index}`))
  const answers = await Promise.all(
    names.map((name, index) => call(handler, '/v1/pets', { json: { name, categoryId: index } })),
  )
  const rejected = answers[16]!
  assert.ok(rejected.status >= 500, `the refused row fails: ${rejected.status} ${rejected.text}`)
  assert.equal(rejected.headers.get('content-type'), 'application/json')
  assert.equal(rejected.body?.status, rejected.status)
  const ids: number[] = []
  for (const [index, answer] of answers.entries()) {
    if (index === 16) continue
    assert.equal(answer.status, 201, `create ${index}: ${answer.text}`)
    assert.deepEqual(answer.body, { id: answer.body.id, name: names[index], categoryId: index })
    ids.push(answer.body.id)
    const read = await call(handler, `/v1/pets/${answer.body.id}`)
    assert.equal(read.body?.name, names[index], 'each create got its own id')
  }
  assert.equal(new Set(ids).size, ids.length, 'ids are distinct')
  const listed = await call(handler, '/v1/pets?limit=100')
  assert.equal(listed.body.length, 39, 'nothing of the refused row, nothing lost')
  return ids
}

/**
 * Creates 300 pets at once in `store` (so group commit batches them): each
 * create gets the id of its own row, and ids follow the order the creates
 * were queued in.
 */
export async function assertBatchIdsMatchRows(store: PetStore): Promise<void> {
  await store.ping?.()
  const created = await Promise.all(
    Array.from({ length: 300 }, (_, i) => store.create({ name: `p${i}`, categoryId: i })),
  )
  for (const [i, pet] of created.entries()) {
    assert.equal((await store.get(pet.id))?.name, `p${i}`)
    if (i > 0) assert.ok(pet.id > created[i - 1]!.id, 'queued first, id first')
  }
}
