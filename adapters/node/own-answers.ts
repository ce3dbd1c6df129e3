/**
 * The answers the Node adapter writes by itself, outside the API (a 408 to a
 * slow client, a 431, a 400 for unparseable HTTP or a missing `Host`, a 405
 * to CONNECT, a 417): each carries an `X-Request-Id` and is told to
 * `onResponse` like every other answer, so that access logs and metrics see
 * them too.
 *
 * @module
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { errorAnswer } from '../../src/http/errors.js'
import type { ApiAnswer } from '../../src/http/exchange.js'
import { setDefaults } from '../../src/http/headers.js'
import { ALL_METHODS } from '../../src/http/methods.js'
import { type OnResponse, tell } from '../../src/http/observe.js'
import { requestId } from '../../src/http/request-id.js'
import type { PetstoreError } from '../../src/shared/petstore-error.js'
import { isNamed } from './request.js'
import { send } from './response.js'

/** The id of such an answer: the client's own when its headers were read and it is sane, else a new one. */
export function ownRequestId(sent: string | string[] | undefined): string {
  return requestId(typeof sent === 'string' ? sent : null)
}

/**
 * Tells `hook` (when there is one) of an answer written outside the API.
 * `method` and `url` are empty when Node could not read the request line
 * (a timeout, malformed HTTP); `started` is when the request reached the
 * adapter (`performance.now()`), or the moment of the answer when unknown.
 */
export function tellOwn(
  hook: OnResponse | undefined,
  request: { method: string; url: string },
  answer: Pick<ApiAnswer, 'status' | 'body'> & { code: string },
  id: string,
  started = performance.now(),
): void {
  if (hook === undefined) return
  tell(hook, { ...answer, headers: {} }, request, id, null, started)
}

/** Requests Node turns away before any handler sees them: status, `code` and `message` of the JSON answer. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request was not received in time'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'Request headers are too large'],
}
const MALFORMED: [number, string, string] = [400, 'bad_request', 'Malformed HTTP request']

/**
 * Answers what Node rejects by itself (a slow loris past `headersTimeout`, a
 * body past `requestTimeout`, unparseable HTTP) like the API answers its
 * errors: a JSON body with `nosniff` and `no-store`, where Node would send a
 * bare status line.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket, onResponse?: OnResponse): void {
  // Node's own check: once an answer has begun on this connection, a second one would corrupt it.
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent
  if (error.code === 'ECONNRESET' || !socket.writable || answering) return void socket.destroy()
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED
  // The request line and headers were not read: no method, target or client id to tell.
  const id = ownRequestId(undefined)
  const body = endWithError(socket, status, code, message, { 'X-Request-Id': id })
  tellOwn(onResponse, { method: '', url: '' }, { status, code, body }, id)
}

/**
 * A CONNECT (Node would close the socket without a word): this is an origin
 * server, not a proxy, so no target is tunnelled to. 405 with the methods the
 * API takes at all, as for any method it does not.
 */
export function answerConnect(request: IncomingMessage, socket: Socket, onResponse?: OnResponse): void {
  if (!socket.writable) return void socket.destroy()
  const started = performance.now()
  const id = ownRequestId(request.headers['x-request-id'])
  const code = 'method_not_allowed'
  const body = endWithError(socket, 405, code, 'CONNECT is not supported: this server is no proxy', {
    Allow: ALL_METHODS,
    'X-Request-Id': id,
  })
  tellOwn(onResponse, { method: 'CONNECT', url: request.url ?? '' }, { status: 405, code, body }, id, started)
}

/**
 * Writes a JSON Error straight to a socket that no `ServerResponse` owns, and
 * half-closes it; a client that does not close its side is cut off a second
 * later. Returns the body written.
 */
function endWithError(
  socket: Socket,
  status: number,
  code: string,
  message: string,
  extra: Record<string, string> = {},
): string {
  const body = JSON.stringify({ code, message, status })
  const headers = Object.entries(extra).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n` +
      `${headers.join('')}\r\n${body}`,
  )
  // What the client still sends is read and dropped: unread bytes at close would reset the connection.
  socket.resume()
  setTimeout(() => socket.destroy(), 1_000).unref()
  return body
}

/**
 * A JSON Error for a request Node would answer by itself (no `Host`, an
 * `Expect` it does not know), in the API's shape, and the connection closed after it.
 */
export function refuse(
  request: IncomingMessage,
  response: ServerResponse,
  error: PetstoreError,
  onResponse: OnResponse | undefined,
  started: number,
): void {
  const answer = errorAnswer(error)
  setDefaults(answer.headers)
  answer.headers.connection = 'close'
  const id = ownRequestId(request.headers['x-request-id'])
  answer.headers['x-request-id'] = id
  send(request, response, answer)
  const { method = '', url = '' } = request
  // node:http sends no body to HEAD: none is counted.
  const told = { status: answer.status, code: error.code, body: method === 'HEAD' ? null : answer.body }
  tellOwn(onResponse, { method, url }, told, id, started)
}

/**
 * Why the request's `Host` is one RFC 9112 (section 3.2) answers with a 400: none on HTTP/1.1 (Node
 * would answer that with an empty body), or more than one field (Node keeps the first, where a proxy
 * in front may have read the last).
 */
export function hostProblem(request: IncomingMessage): string | undefined {
  if (request.headers.host === undefined) {
    const http11 = request.httpVersionMajor === 1 && request.httpVersionMinor === 1
    return http11 ? 'An HTTP/1.1 request needs a Host header' : undefined
  }
  const raw = request.rawHeaders
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (isNamed(raw[i] as string, 'host', 'Host') && ++seen > 1) return 'A request carries one Host header'
  }
  return undefined
}
