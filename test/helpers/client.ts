/**
 * A tiny client over a fetch handler: builds real `Request`s, reads `Response`s.
 */
import assert from 'node:assert/strict'
import type { FetchHandler } from '../../src/index.js'

export const KEY = 'test-key'
export const AUTH = { authorization: `Bearer ${KEY}` }

export interface Answer {
  status: number
  headers: Headers
  body: any
  text: string
}

/** Sends one request to `handler` and reads the whole answer. */
export async function call(
  handler: FetchHandler,
  path: string,
  init: RequestInit & { json?: unknown; auth?: boolean } = {},
): Promise<Answer> {
  const { json, auth = true, ...rest } = init
  const headers = new Headers(rest.headers)
  if (auth && !headers.has('authorization')) headers.set('authorization', AUTH.authorization)
  if (json !== undefined) {
    headers.set('content-type', 'application/json')
    rest.body = JSON.stringify(json)
    rest.method ??= 'POST'
  }
  const response = await handler(new Request(`http://petstore.test${path}`, { ...rest, headers }))
  const text = await response.text()
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** Asserts an Error body of the spec: `code`, `message`, and `status` equal to the HTTP status. */
export function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, `expected ${status}, got ${answer.status}: ${answer.text}`)
  assert.equal(answer.headers.get('content-type'), 'application/json')
  assert.equal(answer.body?.code, code, answer.text)
  assert.equal(answer.body?.status, status)
  assert.equal(typeof answer.body?.message, 'string')
  assert.ok(answer.body.message.length > 0)
}

/** The URL of a `Link` header's `rel="next"` target, if any. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link') ?? ''
  return /<([^>]+)>;\s*rel="next"/.exec(link)?.[1]
}
