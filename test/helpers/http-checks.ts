/**
 * The checks every way of serving the API must pass (a runtime, a framework,
 * an example program): list, create, get, and a 401. Each server under test
 * is reached through a fetch handler, so a remote server and an in-process
 * handler are checked by the same code.
 */
import assert from 'node:assert/strict'
import type { FetchHandler } from '../../src/index.js'
import { call } from './client.js'

/** A fetch handler that sends every request to the server at `origin` over real HTTP. */
export function remote(origin: string): FetchHandler {
  return (request) => {
    const url = new URL(request.url)
    const init: RequestInit & { duplex?: 'half' } = { method: request.method, headers: request.headers }
    if (request.body) Object.assign(init, { body: request.body, duplex: 'half' })
    return fetch(`${origin}${url.pathname}${url.search}`, init)
  }
}

/** Drives `handler` (whose API lives under `basePath`) through the shared checks. */
export async function checkServing(handler: FetchHandler, basePath = '/v1', key = 'test-key'): Promise<void> {
  const auth = { authorization: `Bearer ${key}` }
  const denied = await call(handler, `${basePath}/pets`, { auth: false })
  assert.equal(denied.status, 401, denied.text)
  assert.equal(denied.body.code, 'unauthorized')
  assert.match(denied.headers.get('www-authenticate') ?? '', /^Bearer realm="petstore"/)

  const created = await call(handler, `${basePath}/pets`, {
    headers: auth,
    json: { name: 'Rex "the dog" 🐕', categoryId: 7, status: 'sold' },
  })
  assert.equal(created.status, 201, created.text)
  assert.equal(created.headers.get('location'), `${basePath}/pets/${created.body.id}`)
  assert.deepEqual(created.body, { id: created.body.id, name: 'Rex "the dog" 🐕', categoryId: 7, status: 'sold' })

  const got = await call(handler, `${basePath}/pets/${created.body.id}`, { headers: auth })
  assert.equal(got.status, 200, got.text)
  assert.deepEqual(got.body, created.body)
  assert.ok(got.headers.get('deprecation'), 'getPet is deprecated')
  // HEAD: GET's headers, Content-Length in UTF-8 bytes (the name holds a 4-byte emoji), and no body.
  const head = await call(handler, `${basePath}/pets/${created.body.id}`, { headers: auth, method: 'HEAD' })
  assert.equal(head.status, 200)
  assert.equal(head.text, '')
  assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(got.text)))

  const listed = await call(handler, `${basePath}/pets?status=sold`, { headers: auth })
  assert.equal(listed.status, 200, listed.text)
  assert.ok(Array.isArray(listed.body))
  assert.deepEqual(
    listed.body.find((pet: { id: number }) => pet.id === created.body.id),
    created.body,
  )
}

/**
 * Request bodies reach the handler unread, whatever serves it: a framework
 * that parsed them first would answer these itself (its own 413 or 415, or
 * no body at all for the handler). So the errors must be the API's own.
 */
export async function checkBodies(handler: FetchHandler, basePath = '/v1', key = 'test-key'): Promise<void> {
  const post = (headers: Record<string, string>, body: string) =>
    call(handler, `${basePath}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...headers },
      body,
    })
  const text = await post({ 'content-type': 'text/plain' }, 'Rex')
  assert.equal(text.status, 415, text.text)
  assert.equal(text.body?.code, 'unsupported_media_type')

  const broken = await post({ 'content-type': 'application/json' }, '{"name":')
  assert.equal(broken.status, 400, broken.text)
  assert.equal(broken.body?.code, 'invalid_json')

  // Over the API's limit (100 KiB) and over Express's and Fastify's own (100 KB, 1 MiB), whose answers differ.
  // Last: some servers close the connection after such an answer, and a request sent on it meanwhile would fail.
  const large = await post({ 'content-type': 'application/json' }, `{"name":"${'x'.repeat(1024 * 1024)}"}`)
  assert.equal(large.status, 413, large.text)
  assert.equal(large.body?.code, 'payload_too_large')
}
