/**
 * Who gets a connection when connections run short: the connection cap of
 * `serve()`, kept by closing the connection idle the longest instead of
 * refusing the newcomer, and a deadline for a connection's first request.
 *
 * @module
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/** Limits of {@link guardConnections}; `0` turns one off. */
export interface ConnectionLimits {
  /** Connections open at once. */
  maxConnections: number
  /** Connections open at once from one client address. */
  maxConnectionsPerAddress: number
  /** Time from accept to a whole first request head. */
  firstRequestTimeoutMs: number
  /** Time a kept-alive connection may wait for its next request. */
  keepAliveTimeoutMs: number
}

/** When a connection became idle, and how much it had read then (more since means a request is arriving). */
interface Idle {
  since: number
  bytesRead: number
  /** No request has been received on it yet. */
  fresh: boolean
}

/** What {@link guardConnections} needs to hear about requests. */
export interface ConnectionGuard {
  /** A request head has arrived on `socket`: it is busy until {@link ConnectionGuard.answered}. */
  busy(socket: Socket): void
  /** The answer on `socket` is out; if the connection stays open, it is idle from now. */
  answered(socket: Socket): void
  /** Stops the sweep. */
  stop(): void
}

/**
 * Tracks the server's connections without a timer per connection or request:
 * idle ones sit in one Map in the order they became idle (a Map keeps
 * insertion order, and delete + set moves one to the end), so the one idle
 * the longest is the first, found in O(1), and a sweep a few times a second
 * walks only the entries past their deadline. A busy connection is never
 * closed for room: when every connection is busy, the newcomer is refused, as
 * Node's own `maxConnections` would.
 *
 * Node's `headersTimeout` still bounds every request head; the first-request
 * deadline is shorter because a connection that has sent no request yet is
 * what an idle flood is made of, and an honest client sends its first request
 * head within a round trip of connecting. A connection that has sent nothing
 * by then is closed without a word, as an idle keep-alive connection is; one
 * that has sent part of a request head gets the same 408 as Node's own
 * timeout (through the server's `clientError` listener).
 */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  const { maxConnections, maxConnectionsPerAddress, firstRequestTimeoutMs, keepAliveTimeoutMs } = limits
  const idle = new Map<Socket, Idle>()
  /** Every connection counted against the caps, with its client address. */
  const open = new Map<Socket, string>()
  const perAddress = new Map<string, number>()

  /** Stops counting `socket`: at its close, or at once when it is evicted (its 'close' comes a tick later). */
  const forget = (socket: Socket) => {
    const address = open.get(socket)
    if (address === undefined) return
    open.delete(socket)
    idle.delete(socket)
    if (maxConnectionsPerAddress > 0) {
      const left = (perAddress.get(address) ?? 1) - 1
      if (left === 0) perAddress.delete(address)
      else perAddress.set(address, left)
    }
  }

  /** Closes the connection idle the longest (from `address` only, if given); false if none is idle. */
  const evictOldest = (address?: string): boolean => {
    for (const socket of idle.keys()) {
      if (address !== undefined && open.get(socket) !== address) continue
      forget(socket)
      socket.destroy()
      return true
    }
    return false
  }

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    if (maxConnectionsPerAddress > 0) {
      const mine = perAddress.get(address) ?? 0
      if (mine >= maxConnectionsPerAddress && !evictOldest(address)) return void socket.destroy()
    }
    if (maxConnections > 0 && open.size >= maxConnections && !evictOldest()) return void socket.destroy()
    open.set(socket, address)
    if (maxConnectionsPerAddress > 0) perAddress.set(address, (perAddress.get(address) ?? 0) + 1)
    idle.set(socket, { since: Date.now(), bytesRead: 0, fresh: true })
    socket.once('close', () => forget(socket))
  })

  const sweep = () => {
    const now = Date.now()
    for (const [socket, state] of idle) {
      const age = now - state.since
      // Entries are in idle order: past the shorter deadline's reach, every later one is younger still.
      if (age < Math.min(firstRequestTimeoutMs || Infinity, keepAliveTimeoutMs || Infinity)) break
      if (state.fresh) {
        if (firstRequestTimeoutMs > 0 && age >= firstRequestTimeoutMs) {
          idle.delete(socket)
          // Nothing asked, nothing owed: closed like an idle keep-alive connection, which every client retries.
          if (socket.bytesRead === 0) socket.destroy()
          else server.emit('clientError', firstRequestTimeout(), socket)
        }
      } else if (keepAliveTimeoutMs > 0 && age >= keepAliveTimeoutMs) {
        idle.delete(socket)
        // Bytes since it became idle: the next request is arriving, and Node's headersTimeout bounds it.
        if (socket.bytesRead === state.bytesRead) socket.destroy()
      }
    }
  }
  const shortest = Math.min(firstRequestTimeoutMs || 10_000, keepAliveTimeoutMs || 10_000)
  const timer = setInterval(sweep, Math.min(1_000, Math.max(50, Math.floor(shortest / 10))))
  timer.unref()
  server.once('close', () => clearInterval(timer))

  return {
    busy(socket) {
      idle.delete(socket)
    },
    answered(socket) {
      // A pipelined request's answer may already be next on the connection: then it is still busy.
      if (socket.destroyed || !open.has(socket) || (socket as Socket & { _httpMessage?: unknown })._httpMessage) return
      idle.set(socket, { since: Date.now(), bytesRead: socket.bytesRead, fresh: false })
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
