/**
 * A create's answer comes as a PendingAnswer: handed to its takers in the reaction that makes
 * it, and awaitable like a promise by anyone else. What it must keep: every taker and every
 * waiter gets the one answer, once, whether it asked before or after the answer was made, and
 * a failure is an answer like any other.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ApiAnswer, engineOf, PendingAnswer } from '../src/http/exchange.js'
import { fromRequest } from '../src/http/web-request.js'
import { createPetstore, memoryStore } from '../src/index.js'
import { AUTH, KEY } from './helpers/client.js'

const create = (body: string) =>
  fromRequest(
    new Request('http://x/v1/pets', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body,
    }),
  )

/** The result of a create of `body` by the engine the Node adapter drives, which must be a PendingAnswer. */
function toCome(body: string): PendingAnswer {
  const engine = engineOf(createPetstore({ store: memoryStore(), keys: [KEY] }))
  assert.ok(engine, 'the handler carries its engine')
  const result = engine(create(body))
  assert.ok(result instanceof PendingAnswer)
  return result
}

describe('a create answered through PendingAnswer', () => {
  it('hands the answer to every taker once, whether it took before or after the answer was made', async () => {
    const result = toCome('{"name":"Rex","categoryId":1}')
    const taken: ApiAnswer[] = []
    result.take((answer) => taken.push(answer))
    result.take((answer) => taken.push(answer))
    const awaited = await result
    assert.equal(awaited.status, 201)
    assert.deepEqual(JSON.parse(awaited.body ?? ''), { id: 1, name: 'Rex', categoryId: 1 })
    assert.equal(awaited.headers.location, '/v1/pets/1')
    assert.deepEqual(taken, [awaited, awaited])
    result.take((answer) => taken.push(answer)) // after the answer: at once
    assert.equal(taken.length, 3)
    assert.equal(await result, awaited)
  })

  it('is awaited like a promise, and then() chains as a promise does', async () => {
    const result = toCome('{"name":"Tom","categoryId":2,"status":"sold"}')
    const status = await result.then((answer) => answer.status)
    assert.equal(status, 201)
    const failedStep = result.then(() => {
      throw new Error('the waiter failed')
    })
    await assert.rejects(failedStep, /the waiter failed/)
    assert.equal((await result).status, 201, 'a failing waiter does not change the answer')
  })

  it('maps its answer for a step run after it (onResponse), in the same reaction', async () => {
    const result = toCome('{"name":"Ada","categoryId":3}')
    const order: string[] = []
    const mapped = result.map((answer) => {
      order.push('mapped')
      return { ...answer, status: answer.status + 1 }
    })
    mapped.take(() => order.push('taken'))
    assert.equal((await mapped).status, 202)
    assert.deepEqual(order, ['mapped', 'taken'])
  })

  it('carries a refusal as an answer: a body that is no JSON is a 400, never a rejection', async () => {
    const answer = await toCome('{"name":')
    assert.equal(answer.status, 400)
    assert.equal(JSON.parse(answer.body ?? '').code, 'invalid_json')
    const invalid = await toCome('{"name":"","categoryId":1}')
    assert.equal(JSON.parse(invalid.body ?? '').code, 'validation_error')
  })
})
