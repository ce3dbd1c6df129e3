/**
 * The answers the Node adapter writes itself, outside the API (408, 431, 400
 * for malformed HTTP or a missing Host, 405 to CONNECT, 417), over raw
 * sockets: each carries an `X-Request-Id`, and `serve()`'s `onResponse`
 * hears of it with that id, as the access log and metrics do of any answer.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { type RunningServer, serve } from '../adapters/node/index.js'
import { createPetstore, memoryStore, type ResponseInfo } from '../src/index.js'
import { KEY } from './helpers/client.js'
import { openSocket } from './helpers/raw-http.js'
import { killAll, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const servers: RunningServer[] = []
after(async () => {
  for (const server of servers) await server.close()
  killAll()
})

/** A server whose handler and adapter tell the same list. */
async function observedServer(): Promise<{ port: number; told: ResponseInfo[] }> {
  const told: ResponseInfo[] = []
  const onResponse = (info: ResponseInfo) => void told.push(info)
  const handler = createPetstore({ store: memoryStore(), keys: [KEY], onResponse })
  const server = await serve({ handler, port: 0, headersTimeoutMs: 300, requestTimeoutMs: 300, onResponse })
  servers.push(server)
  return { port: server.port, told }
}

/** Sends `text` on a fresh connection and resolves with the status and the headers of what came back. */
async function raw(
  port: number,
  text: string,
): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const client = await openSocket(port)
  client.socket.write(text)
  await client.closed
  const received = client.received()
  const [head = '', body = ''] = received.split('\r\n\r\n', 2)
  const [line = '', ...fields] = head.split('\r\n')
  const headers = new Map(
    fields.map((field) => [
      field.slice(0, field.indexOf(':')).toLowerCase(),
      field.slice(field.indexOf(':') + 1).trim(),
    ]),
  )
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(line)?.[1]), headers, body }
}

describe("Node's own answers", () => {
  const cases: Array<[string, string, number, string, string]> = [
    ['malformed HTTP', 'GARBAGE\r\n\r\n', 400, 'bad_request', ''],
    [
      'headers past 16 KiB',
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'headers_too_large',
      '',
    ],
    ['a head that never ends', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\n', 408, 'request_timeout', ''],
    ['no Host', 'GET /v1/pets HTTP/1.1\r\n\r\n', 400, 'bad_request', 'GET'],
    [
      'CONNECT',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      405,
      'method_not_allowed',
      'CONNECT',
    ],
    [
      'an unknown Expect',
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n',
      417,
      'expectation_failed',
      'GET',
    ],
  ]
  for (const [label, text, status, code, method] of cases) {
    it(`${label}: ${status} with an X-Request-Id, told to onResponse`, async () => {
      const { port, told } = await observedServer()
      const answer = await raw(port, text)
      assert.equal(answer.status, status)
      assert.equal(JSON.parse(answer.body).code, code)
      const id = answer.headers.get('x-request-id') ?? ''
      assert.match(id, /^[\x21-\x7e]{1,128}$/)
      await until(() => told.length > 0, 'onResponse told')
      assert.equal(told.length, 1, 'told once')
      const [info] = told
      assert.equal(info?.requestId, id)
      assert.equal(info?.status, status)
      assert.equal(info?.code, code)
      assert.equal(info?.method, method)
      assert.equal(info?.route, null)
      assert.equal(info?.bytes, Buffer.byteLength(answer.body))
    })
  }

  it('keeps a sane client id where Node read the headers, and replaces one that is not', async () => {
    const { port, told } = await observedServer()
    const kept = await raw(port, 'GET /v1/pets HTTP/1.1\r\nX-Request-Id: client-7\r\n\r\n')
    assert.equal(kept.headers.get('x-request-id'), 'client-7')
    const replaced = await raw(port, `GET /v1/pets HTTP/1.1\r\nX-Request-Id: ${'x'.repeat(200)}\r\n\r\n`)
    const fresh = replaced.headers.get('x-request-id') ?? ''
    assert.ok(fresh.length > 0 && fresh.length <= 128, fresh)
    await until(() => told.length === 2, 'onResponse told twice')
    assert.deepEqual(
      told.map((info) => [info.requestId, info.url]),
      [
        ['client-7', '/v1/pets'],
        [fresh, '/v1/pets'],
      ],
    )
  })

  it('reach the binary’s access log, with the id the client got', async () => {
    const server = await startServer(['--port', '0', '--db', 'memory', '--key', KEY, '--log', 'json'])
    try {
      const answer = await raw(server.port, 'GARBAGE\r\n\r\n')
      assert.equal(answer.status, 400)
      await until(() => server.stdout().split('\n').length > 2, 'an access log line')
      const [, line] = server.stdout().split('\n')
      const logged = JSON.parse(line ?? '')
      assert.equal(logged.reqId, answer.headers.get('x-request-id'))
      assert.equal(logged.res.statusCode, 400)
      assert.equal(logged.code, 'bad_request')
    } finally {
      await server.stop()
    }
  })
})
