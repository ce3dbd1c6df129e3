/**
 * The binary's access log: one line per answered request on stdout, from the
 * core's `onResponse` hook.
 *
 * Written by hand rather than with pino: a line is one template string over
 * fields the hook already holds, where pino would add a dependency, a child
 * logger and its serializers per request for the same bytes. The JSON lines
 * use pino's field names (`level`, `time`, `pid`, `hostname`, `msg`, `reqId`,
 * `req`, `res`, `responseTime`), so pino-pretty and log shippers read them.
 *
 * @module
 */
import { hostname } from 'node:os'
import type { OnResponse, ResponseInfo } from '../src/for-binary.js'
import { type LineWriter, lineWriter } from './log-writer.js'
import type { LogFormat, LogLevel } from './options.js'
import { inWorker } from './workers.js'

/** pino's numeric levels. */
const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, silent: Number.POSITIVE_INFINITY }

/** 5xx are errors, 4xx warnings (the client's mistake, worth seeing), the rest information. */
const levelOf = (status: number) => (status >= 500 ? 50 : status >= 400 ? 40 : 30)

/** A cursor is an opaque token up to a few hundred characters: its first 8 tell pages apart in a log. */
const CURSOR = /([?&]cursor=)([^&]{8})[^&]+/g

/** The target as logged: the query kept, a `cursor` value cut short. */
export function loggedUrl(url: string): string {
  return url.includes('cursor=') ? url.replace(CURSOR, '$1$2...') : url
}

/**
 * Batches of at most 64 KiB from a process of its own; under `--workers`, at most PIPE_BUF
 * (4 KiB), so that workers sharing a pipe never interleave mid-line.
 */
const BATCH_BYTES = inWorker ? 4096 : 64 * 1024

/** The writer of the process's access log on stdout, made on first use: see log-writer.ts. */
let stdoutWriter: LineWriter | undefined
function logToStdout(): LineWriter {
  if (stdoutWriter === undefined) {
    const writer = lineWriter(process.stdout, BATCH_BYTES)
    // An exit without flushAccessLog() (a failure, a second signal) still writes what is gathered.
    process.once('exit', writer.flushSync)
    stdoutWriter = writer
  }
  return stdoutWriter
}

/**
 * Resolves once every access-log line so far is written: what the binary
 * awaits on SIGTERM / SIGINT before it exits, so that the last lines are not lost.
 */
export function flushAccessLog(): Promise<void> {
  return stdoutWriter?.flush() ?? Promise.resolve()
}

/** Visible ASCII but `"` and `\\`: a JSON string as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const quoted = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text))

function jsonLine(pid: number, host: string): (level: number, info: ResponseInfo) => string {
  const prefix = `,"pid":${pid},"hostname":${JSON.stringify(host)},"reqId":`
  // The method is an HTTP token, route and code are the API's own: none holds a quote or a backslash.
  // The id and the URL come from the client and are escaped, unless they plainly need not be.
  return (level, info) =>
    `{"level":${level},"time":${Date.now()}${prefix}${quoted(info.requestId)},"req":{"method":"${info.method}","url":${quoted(loggedUrl(info.url))}},"res":{"statusCode":${info.status}},"responseTime":${Math.round(info.durationMs * 1000) / 1000},"route":${info.route === null ? 'null' : `"${info.route}"`},"code":${info.code === null ? 'null' : `"${info.code}"`}${info.fault === undefined ? '' : `,"fault":"${info.fault}"`}${info.clientGone ? ',"clientGone":true' : ''},"msg":"request completed"}\n`
}

const COLOURS = { 30: '\x1b[32m', 40: '\x1b[33m', 50: '\x1b[31m' } as Record<number, string>

function prettyLine(colour: boolean): (level: number, info: ResponseInfo) => string {
  return (level, info) => {
    const time = new Date().toISOString().slice(11, 23)
    const status = colour ? `${COLOURS[level] ?? ''}${info.status}\x1b[0m` : String(info.status)
    const ms = info.durationMs.toFixed(1).padStart(7)
    // Control characters are never printed to a terminal as they are: a URL could carry escape sequences.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
    const url = loggedUrl(info.url).replace(/[\x00-\x1f\x7f]/g, '?')
    const gone = info.clientGone ? '  (client gone)' : ''
    return `${time} ${info.method.padEnd(7)} ${status} ${ms} ms ${String(info.bytes).padStart(6)} B  ${url}  ${info.requestId}${info.fault === undefined ? '' : `  fault=${info.fault}`}${gone}\n`
  }
}

/** pino's `hostname`; '' where asking is not allowed (Deno without `--allow-sys`): a log line is no reason to fail. */
function hostName(): string {
  try {
    return hostname()
  } catch {
    return ''
  }
}

/**
 * The `onResponse` hook writing the access log in `format`, or `undefined`
 * when there is nothing to write (so that the core pays for no hook).
 *
 * @example
 * ```ts
 * createPetstore({ store, keys, onResponse: accessLog('json', 'info') })
 * ```
 */
export function accessLog(format: LogFormat, level: LogLevel, write?: (line: string) => void): OnResponse | undefined {
  if (format === 'off' || level === 'silent') return undefined
  const out = write ?? logToStdout()
  const least = LEVELS[level]
  const line = format === 'json' ? jsonLine(process.pid, hostName()) : prettyLine(process.stdout.isTTY === true)
  return (info) => {
    const lineLevel = levelOf(info.status)
    if (lineLevel >= least) out(line(lineLevel, info))
  }
}
