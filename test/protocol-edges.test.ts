/**
 * Protocol edges over raw sockets, against `serve()` in this process and the
 * binary alike (issue 17): requests Node would answer by itself (no `Host`,
 * an unknown `Expect`, CONNECT, `Expect: 100-continue` without a key),
 * `Authorization` given twice, and paths a proxy would read differently.
 * Every answer is asserted whole: status, JSON body and the usual headers.
 *
 * Run: node --import tsx --test test/protocol-edges.test.ts
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type RunningServer, serve } from '../adapters/node/index.js'
import { createPetstore, memoryStore } from '../src/index.js'
import { openSocket } from './helpers/raw-http.js'
import { killAll, startServer } from './helpers/spawn-server.js'

const KEY = 'k'

/** One answer read off a raw socket: interim `100 Continue` lines apart. */
interface RawAnswer {
  continued: boolean
  status: number
  headers: Record<string, string>
  body: unknown
}

/** Parses the first final answer in `text`, or undefined while it is incomplete. */
function parseAnswer(text: string): RawAnswer | undefined {
  let rest = text
  let continued = false
  while (rest.startsWith('HTTP/1.1 100 ')) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) return undefined
    continued = true
    rest = rest.slice(end + 4)
  }
  const end = rest.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  const status = Number(statusLine.split(' ')[1])
  // A 204 has no content, and no Content-Length to say so.
  if (status === 204) return { continued, status, headers, body: undefined }
  const length = Number(headers['content-length'] ?? Number.NaN)
  const body = rest.slice(end + 4)
  if (!(body.length >= length)) return undefined
  return { continued, status, headers, body: JSON.parse(body.slice(0, length)) }
}

/** Sends `text` on a new connection; resolves with the first final answer (or what arrived when it closed). */
async function exchange(port: number, text: string, afterContinue?: string): Promise<RawAnswer> {
  const client = await openSocket(port)
  client.socket.write(text)
  let closed = false
  void client.closed.then(() => {
    closed = true
  })
  const deadline = performance.now() + 5_000
  let sentRest = false
  for (;;) {
    const received = client.received()
    if (afterContinue !== undefined && !sentRest && received.startsWith('HTTP/1.1 100 ')) {
      sentRest = true
      client.socket.write(afterContinue)
    }
    const answer = parseAnswer(received)
    if (answer) {
      client.socket.destroy()
      return answer
    }
    if (closed || performance.now() > deadline) {
      client.socket.destroy()
      throw new Error(`no complete answer to ${JSON.stringify(text.slice(0, 60))}: ${JSON.stringify(received)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Asserts a whole JSON Error answer: status, body, the usual headers, and `extra` headers. */
function assertError(
  answer: RawAnswer,
  status: number,
  code: string,
  message: string,
  extra: Record<string, string> = {},
): void {
  assert.equal(answer.status, status, JSON.stringify(answer))
  assert.deepEqual(answer.body, { code, message, status })
  assert.equal(answer.headers['content-type'], 'application/json')
  assert.equal(answer.headers['cache-control'], 'no-store')
  assert.equal(answer.headers['x-content-type-options'], 'nosniff')
  for (const [name, value] of Object.entries(extra)) assert.equal(answer.headers[name], value, name)
}

const AMBIGUOUS =
  'The request path is ambiguous: it holds a backslash, a dot segment (. or .., also as %2e) or an encoded / or \\ (%2f, %5c)'
const get = (path: string, headers = `Host: x\r\nAuthorization: Bearer ${KEY}\r\n`) =>
  `GET ${path} HTTP/1.1\r\n${headers}\r\n`

/** The cases, each against a server on `port()`. */
function edgeCases(target: string, port: () => number, healthz: boolean): void {
  describe(target, { concurrency: true }, () => {
    test('HTTP/1.1 without Host: 400 bad_request, connection closed', async () => {
      for (const path of ['/v1/pets', ...(healthz ? ['/healthz'] : [])]) {
        const answer = await exchange(port(), get(path, `Authorization: Bearer ${KEY}\r\n`))
        assertError(answer, 400, 'bad_request', 'An HTTP/1.1 request needs a Host header', { connection: 'close' })
      }
      // HTTP/1.0 needs none.
      const old = await exchange(port(), `GET /v1/pets HTTP/1.0\r\nAuthorization: Bearer ${KEY}\r\n\r\n`)
      assert.equal(old.status, 200)
    })

    test('Host given twice: 400 bad_request, connection closed, whatever the case or the values', async () => {
      for (const hosts of ['Host: x\r\nHost: y', 'Host: x\r\nhOST: x', 'host: x\r\nAccept: */*\r\nHOST: y']) {
        const answer = await exchange(port(), get('/v1/pets', `${hosts}\r\nAuthorization: Bearer ${KEY}\r\n`))
        assertError(answer, 400, 'bad_request', 'A request carries one Host header', { connection: 'close' })
      }
      // Only the field named Host counts.
      const one = await exchange(port(), get('/v1/pets', `Host: x\r\nX-Host: y\r\nAuthorization: Bearer ${KEY}\r\n`))
      assert.equal(one.status, 200)
    })

    test('header names in any case are read, and a field given twice is read as Node joins it', async () => {
      const body = '{"name":"Rex","categoryId":1}'
      const post = (headers: string) =>
        exchange(port(), `POST /v1/pets HTTP/1.1\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`)
      const key = `case-${Math.random().toString(36).slice(2)}`
      const first = await post(
        `HOST: x\r\nAUTHORIZATION: Bearer ${KEY}\r\ncontent-TYPE: application/json\r\nIDEMPOTENCY-KEY: ${key}\r\n`,
      )
      assert.equal(first.status, 201, JSON.stringify(first))
      assert.equal(first.headers['idempotent-replayed'], undefined)
      const again = await post(
        `Host: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nIdempotency-Key: ${key}\r\n`,
      )
      assert.equal(again.status, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.deepEqual(again.body, first.body)
      const twice = await post(
        `Host: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nIdempotency-Key: a\r\nidempotency-key: a\r\n`,
      )
      assert.equal(twice.status, 400)
      assert.equal((twice.body as { code: string }).code, 'invalid_idempotency_key')
    })

    test('Expect other than 100-continue: 417 expectation_failed', async () => {
      const answer = await exchange(
        port(),
        get('/v1/pets', `Host: x\r\nAuthorization: Bearer ${KEY}\r\nExpect: foo\r\n`),
      )
      assertError(answer, 417, 'expectation_failed', 'Expect: 100-continue is the only expectation this server meets', {
        connection: 'close',
      })
    })

    test('CONNECT, with or without a key: 405 method_not_allowed, not a closed socket', async () => {
      for (const auth of ['', `Authorization: Bearer ${KEY}\r\n`]) {
        const answer = await exchange(
          port(),
          `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n${auth}\r\n`,
        )
        assertError(answer, 405, 'method_not_allowed', 'CONNECT is not supported: this server is no proxy', {
          allow: 'GET, HEAD, POST',
          connection: 'close',
        })
      }
    })

    test('Expect: 100-continue: a 401, 413 or 415 comes without a 100 Continue; a valid upload gets it', async () => {
      const body = '{"name":"a","categoryId":1}'
      for (const auth of ['', 'Authorization: Bearer wrong\r\n']) {
        const answer = await exchange(
          port(),
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
            `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
        )
        assert.equal(answer.continued, false, 'no 100 Continue before the 401')
        assert.equal(answer.status, 401)
        assert.equal((answer.body as { code: string }).code, 'unauthorized')
      }
      // With the key, refused by what the headers say: no 100 either.
      for (const [headers, status] of [
        [`Content-Type: application/json\r\nContent-Length: ${200 * 1024}`, 413],
        [`Content-Type: text/plain\r\nContent-Length: ${body.length}`, 415],
      ] as const) {
        const answer = await exchange(
          port(),
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n${headers}\r\nExpect: 100-continue\r\n\r\n`,
        )
        assert.equal(answer.continued, false, `no 100 Continue before the ${status}`)
        assert.equal(answer.status, status)
      }
      // With the key, the 100 comes, and the body is taken.
      const answer = await exchange(
        port(),
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
        body,
      )
      assert.equal(answer.continued, true)
      assert.equal(answer.status, 201)
      assert.equal((answer.body as { name: string }).name, 'a')
    })

    test('a POST with no body at all (no Content-Length, no Transfer-Encoding): 400 naming body, as with Content-Length: 0', async () => {
      for (const type of ['', 'Content-Type: application/json\r\n']) {
        const answer = await exchange(
          port(),
          `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n${type}Connection: close\r\n\r\n`,
        )
        assert.equal(answer.status, 400)
        assert.deepEqual(answer.body, {
          code: 'validation_error',
          message: 'body: is required (a JSON object with name and categoryId)',
          status: 400,
          details: [{ path: 'body', message: 'is required' }],
        })
      }
      // A body without a type is still a 415, chunked too.
      const chunked = await exchange(
        port(),
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      )
      assert.equal(chunked.status, 415)
    })

    test('Authorization twice, in either order, a Basic or an empty one beside the Bearer: 400 bad_request', async () => {
      for (const [first, second] of [
        [`Bearer ${KEY}`, 'Bearer wrong'],
        ['Bearer wrong', `Bearer ${KEY}`],
        ['Basic YTpi', `Bearer ${KEY}`],
        ['', `Bearer ${KEY}`],
        [`Bearer ${KEY}`, ''],
      ]) {
        const answer = await exchange(
          port(),
          get('/v1/pets', `Host: x\r\nAuthorization: ${first}\r\nauthorization: ${second}\r\n`),
        )
        assertError(
          answer,
          400,
          'bad_request',
          'Authorization was given more than once; send it once: Authorization: Bearer <key>',
        )
        assert.equal(answer.headers['www-authenticate'], undefined)
      }
      // Any spelling of the name counts, the same key twice too.
      const auth = `AUTHORIZATION: Bearer ${KEY}\r\naUtHoRiZaTiOn: Bearer ${KEY}\r\n`
      assertError(
        await exchange(port(), get('/v1/pets', `Host: x\r\n${auth}`)),
        400,
        'bad_request',
        'Authorization was given more than once; send it once: Authorization: Bearer <key>',
      )
    })

    test('a \\, a dot segment in any spelling, or an encoded / in the path: 400 bad_request', async () => {
      const paths = [
        '/v1/pets\\1',
        '/v1/pets/%2e%2e/%2e%2e/healthz',
        '/v1/pets/../../healthz',
        '/v1/pets/%2E./openapi.json',
        '/v1/./pets',
        '/v1/pets/.%2e',
        '/v1/pets/%2e',
        '/v1/pets%2f1',
        '/healthz/..',
        '/x/../healthz',
        // Nor is the reference page served on a path the parser would rewrite into its own.
        '/x/../v1/docs',
        '/v1/pets/../docs/',
      ]
      for (const path of paths) assertError(await exchange(port(), get(path)), 400, 'bad_request', AMBIGUOUS)
      // A target that does not begin with `/` never reaches the API: Node's parser refuses it.
      assertError(await exchange(port(), get('\\healthz')), 400, 'bad_request', 'Malformed HTTP request')
      // Dots that are no segment of their own stay what they are.
      assert.equal((await exchange(port(), get('/v1/pets/.1'))).status, 400) // a petId that is no integer
      assert.equal((await exchange(port(), get('/v1/pets?status=sold&x=a/../b'))).status, 200)
    })

    test('an absolute-form target: served when http(s), else 400 bad_request', async () => {
      assert.equal((await exchange(port(), get('http://x/v1/pets?limit=1'))).status, 200)
      assertError(
        await exchange(port(), get('HTTPS://x/v1/pets/9007199254740991')),
        404,
        'not_found',
        'No pet with id 9007199254740991',
      )
      if (healthz) {
        assert.equal((await exchange(port(), get('http://x/healthz'))).status, 200)
      }
      for (const target of [
        'ftp://x/v1/pets',
        'ws://x/v1/pets?limit=1',
        'file:///v1/pets',
        ...(healthz ? ['ftp://x/healthz'] : []),
      ]) {
        assertError(await exchange(port(), get(target)), 400, 'bad_request', 'The request URL is malformed')
      }
      // Node's parser refuses these before the API sees them.
      for (const target of ['urn:x:v1']) {
        assertError(await exchange(port(), get(target)), 400, 'bad_request', 'Malformed HTTP request')
      }
    })

    test('OPTIONS *: 204 with Allow and no key asked for; * with another method: 400 bad_request', async () => {
      for (const auth of ['', `Authorization: Bearer ${KEY}\r\n`]) {
        const answer = await exchange(port(), `OPTIONS * HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)
        assert.equal(answer.status, 204, JSON.stringify(answer))
        assert.equal(answer.headers.allow, 'GET, HEAD, POST, OPTIONS')
        assert.equal(answer.headers['cache-control'], 'no-store')
        assert.equal(answer.headers['x-content-type-options'], 'nosniff')
        assert.match(answer.headers['x-request-id'] ?? '', /./)
        assert.equal(answer.headers['content-type'], undefined)
      }
      for (const method of ['GET', 'POST', 'DELETE']) {
        assertError(
          await exchange(port(), `${method} * HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`),
          400,
          'bad_request',
          'The request target * is only for OPTIONS (OPTIONS * asks about the server)',
        )
      }
    })

    test('a Host the URL parser refuses: 400 bad_request; one that is no host name reads as localhost', async () => {
      const refused = `Host: x:99999\r\nAuthorization: Bearer ${KEY}\r\n`
      for (const path of ['/v1/pets?limit=1', '/v1/pets/1', ...(healthz ? ['/healthz', '/v1/docs'] : [])]) {
        assertError(await exchange(port(), get(path, refused)), 400, 'bad_request', 'The request URL is malformed')
      }
      for (const host of ['a b', '[zz]', '[::1]:8', 'EXAMPLE.org.']) {
        const answer = await exchange(
          port(),
          get('/v1/pets?limit=1', `Host: ${host}\r\nAuthorization: Bearer ${KEY}\r\n`),
        )
        assert.equal(answer.status, 200, host)
      }
    })
  })
}

const key = { keys: [KEY] }
let inProcess: RunningServer | undefined
let binary: Awaited<ReturnType<typeof startServer>> | undefined

before(async () => {
  inProcess = await serve({ handler: createPetstore({ store: memoryStore(), ...key }), port: 0 })
  binary = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
})

after(async () => {
  await inProcess?.close()
  await killAll()
})

edgeCases('serve()', () => inProcess?.port ?? 0, false)
edgeCases('the binary', () => binary?.port ?? 0, true)
