/**
 * The Node request listener: `createPetstore`'s engine driven straight from
 * Node's own request and answer, and any other fetch handler through
 * `@whatwg-node/server`.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { createServerAdapter } from '@whatwg-node/server'
import { type ApiAnswer, type Engine, engineOf, isPending, PendingAnswer } from '../../src/http/exchange.js'
import type { AnyFetchHandler as FetchHandler } from '../../src/http/fetch-handler.js'
import { toResponse } from '../../src/http/fetch-handler.js'
import { oneLineOf } from '../../src/shared/petstore-error.js'
import { shown } from '../../src/util/option-checks.js'
import { allAuthorization, awaitingContinue, NodeApiRequest } from './request.js'
import { lastResort, lingerThenClose, send } from './response.js'

/** A Node request listener: for `http.createServer`, Express `app.use`, or any connect-style stack. */
export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Turns a fetch handler into a Node request listener. Under Express, the full
 * original URL (`req.originalUrl`) is what the handler sees, so mounted at
 * `app.use('/api', …)` it needs `basePath: '/api/v1'`.
 *
 * Any fetch handler goes through `@whatwg-node/server`. The handler that
 * `createPetstore` returns is driven directly instead: Node's request is
 * read as it is and the answer written with `writeHead`/`end`, because
 * building a `Request` and a `Response` for each call costs more than the
 * API's own work. The answers are the same either way; the tests run both.
 *
 * @example
 * ```ts
 * app.use('/api', toNodeListener(createPetstore({ store, keys, basePath: '/api/v1' })))
 * ```
 */
export function toNodeListener(handler: FetchHandler): NodeListener {
  if (typeof handler !== 'function') {
    throw new TypeError(`toNodeListener: handler must be a fetch handler, (request) => Response; got ${shown(handler)}`)
  }
  const engine = engineOf(handler)
  let adapter: NodeListener | undefined
  // Another handler needs the adapter for its first request: loading starts now, not then.
  if (!engine) whatwgAdapter()
  const adapted: NodeListener = (request, response) => {
    // A handler of its own reads the body as it likes: it gets the 100 Continue at once, as from Node.
    if (awaitingContinue.delete(response)) response.writeContinue()
    // @whatwg-node builds the Request from `headers`, which hold the first Authorization only.
    const { authorization } = request.headers
    if (authorization !== undefined) request.headers.authorization = allAuthorization(request.rawHeaders, authorization)
    const { socket } = request
    response.once('finish', () => {
      if (!request.complete) lingerThenClose(request, socket)
    })
    if (adapter !== undefined) return adapter(request, response)
    whatwgAdapter().then(
      (createServerAdapter) => {
        adapter ??= createServerAdapter((request: Request) => answered(handler, request)) as unknown as NodeListener
        adapter(request, response)
      },
      (error: unknown) => {
        console.error(`petstore-server/node: @whatwg-node/server failed to load: ${oneLineOf(error)}`)
        send(request, response, lastResort())
      },
    )
  }
  return engine ? engineListener(engine, adapted) : adapted
}

/**
 * `@whatwg-node/server`'s `createServerAdapter`, imported on first use: our own handler never
 * needs it but for a body a middleware has already read. Merely loaded, never called, its fetch
 * ponyfill makes every request of any node:http server in the process cost more CPU.
 */
let whatwg: Promise<typeof createServerAdapter> | undefined
const whatwgAdapter = () => {
  if (whatwg === undefined) {
    whatwg = import('@whatwg-node/server').then((loaded) => loaded.createServerAdapter)
    // Loaded ahead of a request, a failure is told to that request: until then it is no unhandled rejection.
    whatwg.catch(() => {})
  }
  return whatwg
}

/**
 * What another fetch handler answers, or a JSON 500 where it throws, rejects or gives no
 * `Response`: @whatwg-node/server would send the error's message and stack to the client, or
 * never answer. The failure goes to stderr, as `createPetstore`'s default `onError` does.
 */
async function answered(handler: FetchHandler, request: Request): Promise<Response> {
  let failure: unknown
  try {
    const response = await handler(request)
    // Not `instanceof`: a Response of another implementation (a ponyfill's) is as good.
    if (typeof (response as Response | undefined)?.status === 'number' && response.headers) return response
    failure = new TypeError(`the handler gave ${shown(response)}, not a Response`)
  } catch (error) {
    failure = error
  }
  console.error(`petstore-server/node: ${request.method} ${request.url} failed: ${oneLineOf(failure)}`)
  return toResponse(lastResort())
}

/** The listener that drives an engine directly; requests it cannot read as they are go to `fallback`. */
function engineListener(engine: Engine, fallback: NodeListener): NodeListener {
  const answer: NodeListener = (request, response) => {
    // A body that Express or another middleware has already parsed: the stream is spent, @whatwg-node knows the way.
    if ((request as IncomingMessage & { body?: unknown }).body !== undefined) return fallback(request, response)
    // Another copy of the package (its CommonJS build beside the ESM one) answers with its own PendingAnswer.
    let result: ApiAnswer | PromiseLike<ApiAnswer>
    try {
      result = engine(new NodeApiRequest(request, response))
    } catch {
      // An engine never throws; one of another make that does must not take the process down.
      return send(request, response, lastResort())
    }
    if (!isPending(result)) return send(request, response, result)
    if (result instanceof PendingAnswer) return result.take((answer) => send(request, response, answer))
    result.then(
      (answer) => send(request, response, answer),
      () => send(request, response, lastResort()),
    )
  }
  // A pipelined request waits for the answers before it to be written (Node hands its answer the
  // socket then): a client that sends many and reads none holds one answer, not one per request.
  return (request, response) => {
    if (response.socket !== null) return answer(request, response)
    const { socket } = request
    const stalled = waitingOn(socket)
    response.once('socket', () => {
      stalled.moved()
      answer(request, response)
    })
  }
}

/** `serve()`'s `writeTimeoutMs`, by server. */
const writeTimeouts = new WeakMap<object, number>()

/** Connections of `server` whose pipelined requests wait longer than `ms` for an answer to be read are closed. */
export function closeStalledWrites(server: object, ms: number): void {
  if (ms > 0) writeTimeouts.set(server, ms)
}

/** Pipelined requests waiting on one connection, and the timer that closes it if none moves on. */
class Waiting {
  count = 0
  timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    private readonly socket: Socket,
    /** The server's write timeout; `undefined`: none (a listener outside `serve()`). */
    private readonly ms: number | undefined,
  ) {}

  /** One more request waits: the first arms the timer. */
  add(): void {
    if (this.count++ === 0 && this.ms !== undefined) {
      const { socket } = this
      this.timer = setTimeout(() => socket.destroy(), this.ms)
      this.timer.unref()
    }
  }

  /** A waiting request got its turn: the connection moves on. */
  moved(): void {
    if (--this.count === 0) clearTimeout(this.timer)
    else this.timer?.refresh()
  }
}

const waiting = new WeakMap<Socket, Waiting>()

/**
 * One more request waiting on `socket` for the answers before it to be read. While some wait,
 * the connection is closed if none moves on within the server's write timeout: its client has
 * stopped reading.
 */
function waitingOn(socket: Socket): Waiting {
  let state = waiting.get(socket)
  if (state === undefined) {
    state = new Waiting(socket, writeTimeouts.get((socket as Socket & { server?: object }).server ?? socket))
    const created = state
    socket.once('close', () => clearTimeout(created.timer))
    waiting.set(socket, state)
  }
  state.add()
  return state
}
