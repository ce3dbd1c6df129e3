/**
 * A create whose client goes away while the store writes it: the pet is
 * stored, so the answer told to onResponse (the access log, the metrics) is
 * the 201 it would have had, marked `clientGone`, not a `400 aborted`. On a
 * PostgreSQL server (PETSTORE_TEST_POSTGRES_URL), whose insert is held back by
 * a lock another connection takes on the table; and on SQLite and memory,
 * where a create is done before the client can go.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { createPetstore, memoryStore, type ResponseInfo } from '../src/index.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { AUTH, KEY } from './helpers/client.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL

/** A create of Rex whose client can go away: `abort()`. */
function createRequest() {
  const controller = new AbortController()
  const request = new Request('http://x/v1/pets', {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: '{"name":"Rex","categoryId":1}',
    signal: controller.signal,
  })
  return { request, abort: () => controller.abort() }
}

describe('a create whose client goes away', () => {
  it('is told as the 201 it is, marked clientGone, on PostgreSQL', {
    skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
  }, async () => {
    const schema = `petstore_gone_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    const store = postgresStore({ connectionString: POSTGRES_URL ?? '' }, { schema })
    after(async () => {
      await store.close?.()
      await admin.query(`drop schema if exists ${schema} cascade`)
      await admin.end()
    })
    const told: ResponseInfo[] = []
    const handler = createPetstore({ store, keys: [KEY], onResponse: (info) => told.push(info) })
    await store.ping?.() // migrated: the table exists
    // Another connection holds the table: the insert waits for it.
    await admin.query('begin')
    await admin.query(`lock table ${schema}.petstore_pets in access exclusive mode`)
    const { request, abort } = createRequest()
    const answered = handler(request)
    await sleep(300)
    abort()
    await sleep(100)
    await admin.query('commit')
    const response = await answered
    assert.equal(response.status, 201)
    assert.deepEqual(
      told.map(({ status, code, clientGone }) => ({ status, code, clientGone })),
      [{ status: 201, code: null, clientGone: true }],
    )
    const { rows } = await admin.query(`select name from ${schema}.petstore_pets`)
    assert.deepEqual(rows, [{ name: 'Rex' }])
  })

  it('that went before the create began stores nothing: 400 aborted', async () => {
    const store = memoryStore()
    const told: ResponseInfo[] = []
    const handler = createPetstore({ store, keys: [KEY], onResponse: (info) => told.push(info) })
    const { request, abort } = createRequest()
    abort()
    assert.equal((await handler(request)).status, 400)
    assert.deepEqual(
      told.map(({ status, clientGone }) => ({ status, clientGone })),
      [{ status: 400, clientGone: true }],
    )
    assert.deepEqual(await store.list({ limit: 5 }), [])
  })

  it('is told as a 201 whose client stayed, with clientGone false', async () => {
    const told: ResponseInfo[] = []
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], onResponse: (info) => told.push(info) })
    assert.equal((await handler(createRequest().request)).status, 201)
    assert.deepEqual(
      told.map(({ status, clientGone }) => ({ status, clientGone })),
      [{ status: 201, clientGone: false }],
    )
  })
})
