/**
 * Writing an answer to Node's `ServerResponse`, the last-resort 500, and the
 * lingering close of a request body left unread.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { ApiAnswer } from '../../src/http/exchange.js'

const LAST_RESORT = JSON.stringify({
  code: 'internal_error',
  message: 'The server failed to answer this request',
  status: 500,
})

export const lastResort = (): ApiAnswer => ({
  status: 500,
  headers: { 'content-type': 'application/json' },
  body: LAST_RESORT,
})

/**
 * Whether a body may follow the head: HTTP/1.1 has one only when
 * `Content-Length` (not 0) or `Transfer-Encoding` says so. An answer written
 * at once (a 401) goes out before Node has marked even a bodiless request
 * complete, and needs no drain for it.
 */
function mayHaveBody(request: IncomingMessage): boolean {
  const { headers } = request
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0'
}

/**
 * Writes an answer. A header Node refuses (never one of the API's own) turns it into a bare 500.
 * A body left unread (a 413, a 401 to an upload) is drained once the answer is out, as on the
 * other path; a request read to its end (every GET) costs no listener for that.
 */
export function send(
  request: IncomingMessage,
  response: ServerResponse,
  { status, headers, body, contentLength, drop }: ApiAnswer,
): void {
  // An injected `reset` fault (withFaults): the connection goes, with no answer.
  if (drop === true) return void response.destroy()
  if (!request.complete && mayHaveBody(request)) {
    const { socket } = request
    // Read from now on (what is buffered is thrown away): node:http would otherwise discard the body
    // itself once the answer is out, with no bound on its bytes and no 'data' event to count them by.
    request.read()
    response.once('finish', () => {
      if (!request.complete) lingerThenClose(request, socket)
    })
  }
  // A flat [name, value, …] list: Node reads it as it is, where it walks an object's
  // properties one by one, a cost a small answer notices.
  const fields: string[] = []
  for (const name in headers) fields.push(name, headers[name] as string)
  if (body !== null) fields.push('content-length', contentLength ?? String(Buffer.byteLength(body)))
  try {
    response.writeHead(status, fields)
  } catch {
    if (response.headersSent) return void response.destroy()
    response.writeHead(500, { 'content-type': 'application/json', 'content-length': String(LAST_RESORT.length) })
    body = LAST_RESORT
  }
  // node:http sends no body to HEAD by itself.
  response.end(body ?? undefined)
}

/** How long, and how many bytes, an unread request body is drained after its answer. */
const LINGER_MS = 2_000
const LINGER_BYTES = 8 * 1024 * 1024

/**
 * The answer went out before the request body was read to its end (a 413, or
 * a 401 to an upload). Closing the socket at once would make the kernel
 * reset the connection while the client is still sending, and a reset can
 * destroy the answer before the client reads it. So, like a web server's
 * lingering close, the rest of the body is read and thrown away, and the
 * connection lives on if it ends within a bounded time and size; a client
 * that goes on sending past that is cut off. Memory stays flat either way.
 */
export function lingerThenClose(request: IncomingMessage, socket: Socket): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  // Bytes a parser reads with no 'data' to tell (a request destroyed, or dumped by node:http once a
  // foreign handler's answer went out) count too: the socket's own count is watched.
  const start = socket.bytesRead
  const watch = setInterval(() => {
    if (socket.bytesRead - start > LINGER_BYTES) socket.destroy()
  }, 5)
  watch.unref()
  const stop = () => {
    clearInterval(watch)
    clearTimeout(timer)
    socket.off('close', stop)
  }
  socket.once('close', stop)
  if (request.destroyed || request.socket !== socket) {
    // The handler's reader destroyed the request when it stopped reading (@whatwg-node/server's stream does):
    // nothing is left to drain through it, and the connection, whose parser still holds the rest of the body,
    // would never serve another request. It is closed after the answer, which has gone out.
    socket.end()
    return
  }
  let drained = 0
  // Counted as 'data', whether the stream flows or is read below.
  request.on('data', (chunk: Buffer) => {
    drained += chunk.byteLength
    if (drained > LINGER_BYTES) socket.destroy()
  })
  // `read()` rather than `resume()`: the handler's stream reader may still hold
  // a 'readable' listener, and while one is attached the stream never flows.
  request.on('readable', () => {
    while (!request.destroyed && request.read() !== null);
  })
  request.once('end', () => {
    stop()
    // If the server began closing while this body drained, its close() has already closed the connections
    // idle at that moment and would wait for this one until the keep-alive timeout (72 s under Fastify).
    const { server } = socket as Socket & { server?: { listening: boolean } }
    if (server && !server.listening) socket.end()
  })
  request.read(0)
}
