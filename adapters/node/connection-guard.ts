/**
 * Who gets a connection when connections run short: the connection cap of
 * `serve()`, kept by closing the connection idle the longest instead of
 * refusing the newcomer, and a deadline for a connection's first request.
 *
 * @module
 */
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/** Limits of {@link guardConnections}; `0` turns one off. */
export interface ConnectionLimits {
  /** Connections open at once. */
  maxConnections: number
  /** Connections open at once from one client address. */
  maxConnectionsPerAddress: number
  /** Time from accept to a whole first request head. */
  firstRequestTimeoutMs: number
}

/** What {@link guardConnections} needs to hear about requests. */
export interface ConnectionGuard {
  /** A request head has arrived on `socket`, to be answered by `response`: the connection is busy until it is out. */
  busy(socket: Socket, response: ServerResponse): void
  /**
   * `response` is written and has left `socket` (Node's `detachSocket`); if the connection stays
   * open with nothing else to answer, it is idle from now.
   */
  answered(response: ServerResponse, socket: Socket): void
  /** The answers not yet out, on every connection. */
  inFlight(): Iterable<ServerResponse>
  /**
   * Closes the connections with no request in flight: new ones, and kept-alive ones between
   * requests, whether or not they have sent part of their next request head. The server is
   * closing, and nothing was asked on them that could be answered; Node's `closeIdleConnections`
   * leaves a connection with a begun head to its timeout (a kept-alive one to `keepAliveTimeout`).
   */
  closeIdle(): void
  /** Connections open now. */
  openCount(): number
  /** Stops the sweep. */
  stop(): void
}

/** A connection's answers not yet out, oldest first (more than one only when requests are pipelined). */
const ANSWERS = Symbol('petstore-server.answers')
/** The idle connections' list, on the sockets themselves: the one idle before this one, and after it. */
const OLDER = Symbol('petstore-server.idle-older')
const NEWER = Symbol('petstore-server.idle-newer')
type Tracked = Socket & {
  [ANSWERS]?: ServerResponse[]
  [OLDER]?: Tracked | undefined
  [NEWER]?: Tracked | undefined
}

/**
 * Tracks the server's connections without a timer per connection or request,
 * and without a Map write, an allocation or a clock read per request. Idle
 * connections (new ones that have sent no request yet, and kept-alive ones
 * between requests) form a doubly linked list through two properties of their
 * sockets, oldest first: a request unlinks its connection, its answer appends
 * it again, each a few property writes. The one idle the longest is the head,
 * found in O(1) (a newcomer from a capped address walks from the head to that
 * address's first): a walk over all open connections per eviction would slow
 * down the turnover of an idle flood at the cap. New connections are also kept in one Map, in the order they connected, with the
 * time: a sweep a few times a second walks only those past their deadline. A
 * busy connection is never closed for room: when every connection is busy,
 * the newcomer is refused, as Node's own `maxConnections` would.
 *
 * Node's `headersTimeout` still bounds every request head, and its
 * `keepAliveTimeout` closes kept-alive connections (closing them here too,
 * a moment earlier than a client that honours `Keep-Alive: timeout=5` expects,
 * lost requests under load). The first-request deadline is shorter than the
 * headers timeout because a connection that has sent no request yet is what an
 * idle flood is made of, and an honest client sends its first request head
 * within a round trip of connecting. A connection that has sent nothing by then
 * is closed without a word, as an idle keep-alive connection is; one that has
 * sent part of a request head gets the same 408 as Node's own timeout (through
 * the server's `clientError` listener).
 *
 * Nothing per request goes into a Map keyed by the request's own objects, and
 * idle marks are small integers: a Map holding each in-flight answer, or a
 * `Date.now()` (a boxed number) per answer, got young objects promoted, and
 * under load full collections ran several times a second, each pausing the
 * server for milliseconds. A connection's answers in flight are kept on its socket.
 */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  const { maxConnections, maxConnectionsPerAddress, firstRequestTimeoutMs } = limits
  /** Connections without a request yet, in the order they connected, and when they did. */
  const fresh = new Map<Socket, number>()
  /** Every connection counted against the caps, with its client address. */
  const open = new Map<Tracked, string>()
  const perAddress = new Map<string, number>()
  // Milliseconds since the guard began: a small integer, where Date.now() is a large one.
  const epoch = Date.now()
  const clock = () => Date.now() - epoch
  /** The ends of the list of idle connections: the one idle the longest, and the one idle the shortest. */
  let oldestIdle: Tracked | undefined
  let newestIdle: Tracked | undefined
  const isIdle = (socket: Tracked) => oldestIdle === socket || socket[OLDER] !== undefined

  /** `socket` is idle from now: last in the list. */
  const becameIdle = (socket: Tracked) => {
    if (isIdle(socket)) return
    socket[OLDER] = newestIdle
    socket[NEWER] = undefined
    if (newestIdle === undefined) oldestIdle = socket
    else newestIdle[NEWER] = socket
    newestIdle = socket
  }

  /** `socket` is busy or gone: out of the list. */
  const notIdle = (socket: Tracked) => {
    if (!isIdle(socket)) return
    const older = socket[OLDER]
    const newer = socket[NEWER]
    if (older === undefined) oldestIdle = newer
    else older[NEWER] = newer
    if (newer === undefined) newestIdle = older
    else newer[OLDER] = older
    socket[OLDER] = undefined
    socket[NEWER] = undefined
  }

  /** Stops counting `socket`: at its close, or at once when it is evicted (its 'close' comes a tick later). */
  const forget = (socket: Tracked) => {
    const address = open.get(socket)
    if (address === undefined) return
    open.delete(socket)
    fresh.delete(socket)
    notIdle(socket)
    if (maxConnectionsPerAddress > 0) {
      const left = (perAddress.get(address) ?? 1) - 1
      if (left === 0) perAddress.delete(address)
      else perAddress.set(address, left)
    }
  }

  /** Closes the connection idle the longest (from `address` only, if given); false if none is idle. */
  const evictOldest = (address?: string): boolean => {
    let victim = oldestIdle
    while (victim !== undefined && address !== undefined && open.get(victim) !== address) victim = victim[NEWER]
    if (victim === undefined) return false
    forget(victim)
    victim.destroy()
    return true
  }

  server.on('connection', (socket: Tracked) => {
    const address = socket.remoteAddress ?? ''
    if (maxConnectionsPerAddress > 0) {
      const mine = perAddress.get(address) ?? 0
      if (mine >= maxConnectionsPerAddress && !evictOldest(address)) return void socket.destroy()
    }
    if (maxConnections > 0 && open.size >= maxConnections && !evictOldest()) return void socket.destroy()
    open.set(socket, address)
    if (maxConnectionsPerAddress > 0) perAddress.set(address, (perAddress.get(address) ?? 0) + 1)
    // Every socket gets both links at once, so that all keep one shape.
    socket[OLDER] = undefined
    socket[NEWER] = undefined
    becameIdle(socket)
    fresh.set(socket, clock())
    socket.once('close', () => forget(socket))
  })

  const sweep = () => {
    const deadline = clock() - firstRequestTimeoutMs
    for (const [socket, since] of fresh) {
      // In the order they connected: once one is within its time, so are all after it.
      if (since > deadline) break
      fresh.delete(socket)
      // Nothing asked, nothing owed: closed like an idle keep-alive connection, which every client retries.
      if (socket.bytesRead === 0) socket.destroy()
      else server.emit('clientError', firstRequestTimeout(), socket)
    }
  }
  // After a stall (a long GC pause, a starved CPU) timers run before the reads that waited meanwhile: the sweep
  // waits for them (setImmediate runs after this turn's I/O), or it would drop requests that had arrived.
  const timer = setInterval(
    () => setImmediate(sweep),
    Math.min(1_000, Math.max(50, Math.floor(firstRequestTimeoutMs / 10))),
  )
  timer.unref()
  if (!(firstRequestTimeoutMs > 0)) clearInterval(timer)
  server.once('close', () => clearInterval(timer))

  return {
    busy(socket: Tracked, response: ServerResponse) {
      notIdle(socket)
      const answers = socket[ANSWERS]
      if (answers === undefined) {
        // Its first request: no longer fresh.
        fresh.delete(socket)
        socket[ANSWERS] = [response]
      } else answers.push(response)
    },
    answered(response: ServerResponse, socket: Tracked) {
      const answers = socket[ANSWERS]
      if (answers === undefined) return
      const at = answers.indexOf(response)
      if (at < 0) return
      // Nearly always the only one: pop() allocates nothing, where splice() returns an array.
      if (at === answers.length - 1) answers.pop()
      else answers.splice(at, 1)
      // A pipelined request's answer may be next on the connection: then it is still busy. A connection
      // no longer counted (closed, or evicted) is destroyed already.
      if (answers.length > 0 || socket.destroyed) return
      becameIdle(socket)
    },
    *inFlight() {
      for (const socket of open.keys()) yield* socket[ANSWERS] ?? []
    },
    closeIdle() {
      // Every connection without a request in flight is in the idle list (new ones too). Taken out
      // first: a destroyed socket's 'close' comes a tick later, but the walk must not depend on it.
      const idle: Tracked[] = []
      for (let socket = oldestIdle; socket !== undefined; socket = socket[NEWER]) idle.push(socket)
      for (const socket of idle) {
        forget(socket)
        socket.destroy()
      }
    },
    openCount() {
      return open.size
    },
    stop() {
      clearInterval(timer)
    },
  }
}

/** What Node's own header timeout raises, so that the server's `clientError` listener answers it alike (a 408). */
function firstRequestTimeout(): NodeJS.ErrnoException {
  return Object.assign(new Error('The first request was not received in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
}
