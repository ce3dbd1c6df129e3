/**
 * `serve()`: a fetch handler on `node:http`, with limits against slow and
 * idle clients, Node's own answers in the API's shape, and a bounded close.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { OnResponse } from '../../src/http/observe.js'
import { PetstoreError } from '../../src/shared/petstore-error.js'
import { MAX_TIMER_MS, optionalFunction, wholeNumber } from '../../src/util/option-checks.js'
import { type BaseServeOptions, baseOptions, type Running, stopWithin } from '../shared/serving.js'
import { guardConnections } from './connection-guard.js'
import { closeStalledWrites, toNodeListener } from './listener.js'
import { answerClientError, answerConnect, hostProblem, refuse } from './own-answers.js'
import { awaitingContinue } from './request.js'

/** Options of {@link serve}. Every limit has a default meant for a server exposed as it is. */
export interface ServeOptions extends BaseServeOptions {
  /**
   * Time a client has to send a request's line and headers. A client that sends
   * them byte by byte (a "slow loris"), or connects and sends nothing, gets a 408
   * and is disconnected. `0` turns the check off.
   * @default 10_000
   */
  headersTimeoutMs?: number | undefined
  /**
   * Time a client has to send a whole request, body included: an upload that
   * never ends gets a 408 and is disconnected. At least `headersTimeoutMs`
   * (Node's rule), or `0` for off. The largest body the API takes is 100 KiB, so
   * 30 s only cuts clients slower than ~3 KiB/s.
   * @default 30_000
   */
  requestTimeoutMs?: number | undefined
  /**
   * How long an idle keep-alive connection is kept open. One that goes quiet for that long in the
   * middle of its next request head is closed too, without an answer (Node's rule);
   * `headersTimeoutMs` bounds a head that keeps coming.
   * @default 5_000 (Node's own)
   */
  keepAliveTimeoutMs?: number | undefined
  /**
   * Connections open at once. At the cap, a new connection makes room by
   * closing the connection idle the longest (one that has sent no request yet,
   * or a keep-alive one between requests), so a flood of idle connections
   * cannot keep anyone out; only when every connection has a request in flight
   * is the newcomer closed (reset: there is no room to answer 503). A flood
   * then costs the server at most this many file descriptors and parser states
   * (under 10 MiB for 1024, measured) instead of exhausting descriptors, which
   * would fail accept() for everyone, database files included. `0` or
   * `Infinity` for no cap.
   * @default 1024
   */
  maxConnections?: number | undefined
  /**
   * Connections open at once from one client address; past it, that address's
   * own connection idle the longest is closed (and the newcomer if none is
   * idle). Off by default: behind a proxy every client has the proxy's address.
   * `0` for no cap.
   * @default 0
   */
  maxConnectionsPerAddress?: number | undefined
  /**
   * Time a new connection has to send its first request head. A connection
   * that has sent nothing by then is closed (as an idle keep-alive one is); one
   * that has sent part of a head gets a 408. Later requests on the connection
   * have `headersTimeoutMs`. `0` turns the check off.
   * @default 5_000
   */
  firstRequestTimeoutMs?: number | undefined
  /**
   * Time an answer may wait in a connection's buffer for its client to read
   * it. A client that sends requests and stops reading is disconnected then.
   * A pipelined request is answered only once the answer before it is
   * written, so such a client holds one answer, not one per request. `0`
   * turns the timeout off.
   * @default 10_000
   */
  writeTimeoutMs?: number | undefined
  /**
   * Told of the answers written here rather than by the handler (a 408 to a
   * slow client, a 431, a 400 for malformed HTTP or a missing or repeated `Host`, a 405 to
   * CONNECT, a 417), which carry an `X-Request-Id` too. Give it the hook the
   * handler's `onResponse` has, so that logs and metrics see every answer.
   * Their `method` and `url` are `''` where Node could not read the request,
   * `route` is `null`.
   */
  onResponse?: OnResponse | undefined
}

/** A running server: the underlying `node:http` server is `server`. */
export type RunningServer = Running<Server>

const DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  maxConnectionsPerAddress: 0,
  firstRequestTimeoutMs: 5_000,
  writeTimeoutMs: 10_000,
}

/**
 * Node enforces `headersTimeout` and `requestTimeout` only when it sweeps its
 * connections, every 30 s by default: a 10 s limit would then hold for up to
 * 40 s. A tenth of the shortest limit (within 50 ms .. 1 s) keeps them within
 * 10 % for the cost of a walk over the open connections.
 */
function checkingInterval(...timeouts: number[]): number {
  const shortest = Math.min(...timeouts.filter((timeout) => timeout > 0), 10_000)
  return Math.min(1_000, Math.max(50, Math.floor(shortest / 10)))
}

/**
 * Serves a fetch handler on `node:http` and resolves once it listens, with
 * timeouts against slow clients, a connection cap and a bounded graceful close
 * (see {@link ServeOptions} for the defaults). Its `close()` also closes the
 * connections that have sent part of a request head only, and the answers
 * not started yet say `Connection: close`.
 *
 * Per-socket idle timeouts are not used: `@whatwg-node/server` resets them
 * (`socket.setTimeout(0)`) on every answer, so the limits are the server's,
 * and idle connections are tracked by the server too (connection-guard.ts).
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/node'
 *
 * const server = await serve({ handler, port: 8080 })
 * process.on('SIGTERM', () => server.close().then(() => process.exit(0)))
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const { handler, port, hostname, shutdownTimeoutMs } = baseOptions('petstore-server/node serve', options, [
    'onResponse',
    ...Object.keys(DEFAULTS),
  ])
  const { onResponse } = options
  const limits = { ...DEFAULTS, ...definedOnly(options) }
  checkLimits(limits)
  optionalFunction('petstore-server/node serve', 'onResponse', onResponse)
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = limits
  const listener = toNodeListener(handler)
  let closing: Promise<void> | undefined
  /**
   * The server's answers tell the connection guard when they are out through their class: Node
   * calls `detachSocket` once an answer is written and its connection free for the next request.
   * A 'close' listener on every answer (and a property keeping its connection, which `socket`
   * no longer holds by then) would cost every request. An answer cut off with its connection
   * needs no word: the guard forgets a connection at its own 'close'.
   */
  class GuardedResponse extends ServerResponse {
    override detachSocket(socket: Socket): void {
      super.detachSocket(socket)
      connections.answered(this, socket)
      // Its connection may be idle now: when closing, it must not stay open until keepAliveTimeout.
      if (closing) setImmediate(closeIdle)
    }
  }

  /**
   * Closes the connections with no request in flight. Node's own idle ones, and the guard's, which
   * also holds those that have sent no request yet (open until the first-request timeout) or only
   * part of their next one (which Node leaves open until keepAliveTimeout).
   */
  const closeIdle = () => {
    server.closeIdleConnections()
    connections.closeIdle()
  }

  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingInterval(headersTimeoutMs, requestTimeoutMs),
      // Node's own 400 has an empty body: the request handler answers it instead.
      requireHostHeader: false,
      ServerResponse: GuardedResponse,
    },
    (request, response) => {
      connections.busy(request.socket, response)
      if (closing) response.shouldKeepAlive = false
      const wrongHost = hostProblem(request)
      if (wrongHost !== undefined) {
        return refuse(
          request,
          response,
          new PetstoreError(400, 'bad_request', wrongHost),
          onResponse,
          performance.now(),
        )
      }
      listener(request, response)
    },
  )
  closeStalledWrites(server, limits.writeTimeoutMs)
  // Not `server.maxConnections`: past it Node refuses newcomers, and idle connections would keep everyone out.
  const connections = guardConnections(server, {
    ...limits,
    maxConnections: Number.isFinite(limits.maxConnections) ? limits.maxConnections : 0,
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, onResponse),
  )
  server.on('connect', (request: IncomingMessage, socket: Socket) => answerConnect(request, socket, onResponse))
  server.on('checkExpectation', (request, response) =>
    refuse(
      request,
      response,
      new PetstoreError(417, 'expectation_failed', 'Expect: 100-continue is the only expectation this server meets'),
      onResponse,
      performance.now(),
    ),
  )
  // The 100 is sent when the API starts reading the body, so a request refused before (a 401) gets no 100.
  server.on('checkContinue', (request, response) => {
    awaitingContinue.add(response)
    server.emit('request', request, response)
  })

  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => {
      connections.stop()
      reject(error)
    }
    server.once('error', failed)
    server.listen(port, hostname, () => {
      server.off('error', failed)
      resolve()
    })
  })
  // Once listening, the only server errors are failed accepts (EMFILE and the like): Node has
  // dropped that connection already, and an 'error' without a listener would end the process.
  server.on('error', (error) => process.stderr.write(`petstore-server/node: ${error.message}\n`))

  return {
    server,
    port: (server.address() as AddressInfo).port,
    hostname,
    close() {
      if (closing) return closing
      // Answers not started yet say `Connection: close`, so clients do not send more on them.
      for (const response of connections.inFlight()) if (!response.headersSent) response.shouldKeepAlive = false
      const stop = () => {
        const closed = new Promise<void>((resolve, reject) =>
          server.close((error) => (error ? reject(error) : resolve())),
        )
        // Connections with no request in flight would hold close() open.
        closeIdle()
        return closed
      }
      const cut = () => {
        const open = connections.openCount()
        // Said, since the clients on them (a stalled upload, a slow download) get no answer.
        if (open > 0) {
          process.stderr.write(
            `petstore-server/node: ${open} connection(s) still open ${shutdownTimeoutMs} ms after close(), cut\n`,
          )
        }
        server.closeAllConnections()
      }
      closing = stopWithin(shutdownTimeoutMs, stop, cut)
      return closing
    },
  }
}

/** The limits a timer or a count can hold, named as `serve()` names them (Node's own errors name its options). */
function checkLimits(limits: typeof DEFAULTS): void {
  const owner = 'petstore-server/node serve'
  for (const name of [
    'headersTimeoutMs',
    'requestTimeoutMs',
    'keepAliveTimeoutMs',
    'firstRequestTimeoutMs',
    'writeTimeoutMs',
  ] as const) {
    wholeNumber(owner, name, limits[name], { max: MAX_TIMER_MS })
  }
  for (const name of ['maxConnections', 'maxConnectionsPerAddress'] as const) {
    wholeNumber(owner, name, limits[name], { infinity: 'no cap, as 0' })
  }
  const { headersTimeoutMs, requestTimeoutMs } = limits
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new TypeError(
      `${owner}: requestTimeoutMs (${requestTimeoutMs}) must be at least headersTimeoutMs (${headersTimeoutMs}), or 0`,
    )
  }
}

/** The options that are set: `{ maxConnections: undefined }` means the default, not no cap. */
function definedOnly(options: ServeOptions): Partial<typeof DEFAULTS> {
  return Object.fromEntries(
    Object.entries(options).filter(([name, value]) => name in DEFAULTS && value !== undefined),
  ) as Partial<typeof DEFAULTS>
}
