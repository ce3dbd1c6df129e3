/**
 * HTTP at the level hostile and crashing clients live at: raw TCP sockets
 * that send what a test says when it says so, requests over `node:http` with
 * an agent of the test's choosing, and a process's memory from `/proc`.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'

/** A TCP connection to a server, recording what it receives and when it ends. */
export interface RawSocket {
  socket: net.Socket
  /** Everything received so far, as latin1 text. */
  received(): string
  /** Resolves once the connection is closed, with the time since the connect call and the error code if any. */
  closed: Promise<{ afterMs: number; error?: string }>
}

/** Connects to `127.0.0.1:port` and resolves once connected. */
export function openSocket(port: number): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    let error: string | undefined
    // Timed from the connect call, not the client's 'connect': the server starts its clocks when it
    // accepts, which a busy event loop (a concurrent test's upload) can run well before that callback,
    // and a lower bound measured from the callback then failed (447 ms for a timeout of 500).
    const connectedAt = performance.now()
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
    })
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = cause.code
    })
    const closed = new Promise<{ afterMs: number; error?: string }>((resolveClosed) =>
      socket.once('close', () => resolveClosed({ afterMs: performance.now() - connectedAt, error })),
    )
    socket.once('connect', () => resolve({ socket, received: () => text, closed }))
    socket.once('error', reject)
  })
}

/** Writes `text` to `socket` one byte every `intervalMs`, looping over it, until the socket closes. */
export function dripFeed(socket: net.Socket, text: string, intervalMs: number): void {
  let index = 0
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer)
    socket.write(text[index++ % text.length] as string)
  }, intervalMs)
  socket.once('close', () => clearInterval(timer))
}

/** Resolves with the error code of a TCP connection attempt (undefined if it connected). */
export function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(undefined)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code))
  })
}

/** A complete answer. */
export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
}

/**
 * One request over `node:http` through `agent` (`false`: a connection of its
 * own). Rejects when no answer arrives (connection refused, reset, …).
 */
export function request(
  agent: http.Agent | false,
  port: number,
  options: { method?: string; path: string; headers?: http.OutgoingHttpHeaders; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: '127.0.0.1', port, agent, method: options.method ?? 'GET', path: options.path, headers: options.headers },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }))
        response.on('error', reject)
      },
    )
    outgoing.on('error', reject)
    outgoing.end(options.body)
  })
}

/** `VmRSS` (resident memory now) and `VmHWM` (its peak so far) of process `pid`, in MiB, from `/proc`. */
export function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 }
}
