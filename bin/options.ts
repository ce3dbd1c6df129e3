/**
 * The binary's command line and environment, parsed with `node:util`
 * `parseArgs` into one plain object. Flags win over environment variables.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import {
  basePathProblem,
  keyProblem,
  MAX_IDEMPOTENCY_TTL_MS,
  originProblem,
  redactedUrl,
  serverUrlProblem,
  trimSlashes,
} from '../src/for-binary.js'
import { durationMs } from './duration.js'
import { parseTestControl, type TestControlOptions } from './test-control-options.js'

/** A command line the binary cannot run with: printed as one line, exit code 1. */
export class UsageError extends Error {}

export interface CliOptions extends TestControlOptions {
  port: number
  host: string
  db: string
  keys: string[]
  basePath: string
  cors: string[]
  /** `--public-url`: the servers of the OpenAPI document; empty keeps the relative base path. */
  publicUrls: { url: string; description?: string }[]
  /** Serve the API reference page at `{basePath}/docs`. */
  docs: boolean
  /** Signs the list's cursors; undefined: a random one for this run (shared with its workers). */
  cursorSecret: string | undefined
  /** Processes serving the port; 1 is a plain single process, more run under node:cluster (bin/workers.ts). */
  workers: number
  /** serve()'s connection limits; undefined means serve()'s default. */
  maxConnections?: number
  maxConnectionsPerAddress?: number
  firstRequestTimeoutMs?: number
  /** PETSTORE_STATS_INTERVAL_MS, a diagnostic for soak runs: a stats line on stderr this often. */
  statsIntervalMs?: number
  help: boolean
  version: boolean
  /** Where `db` came from, for messages: `--db`, `DATABASE_URL`, or the default. */
  dbFrom: string
  /** Neither `--db` nor DATABASE_URL was given: `db` is the default SQLite file. */
  dbIsDefault: boolean
  /** The keys file SIGHUP re-reads (`--keys-file` or PETSTORE_KEYS_FILE), and how it was named, for messages. */
  keysFile: { path: string; from: string } | undefined
  /** The keys not from that file (`--key`, PETSTORE_API_KEYS): kept across a reload. */
  fixedKeys: string[]
  /** The access log on stdout: one line per request. */
  log: LogFormat
  /** The least severe access-log line written: 5xx are `error`, 4xx `warn`, the rest `info`. */
  logLevel: LogLevel
  /** A separate listener serving Prometheus `/metrics`; `undefined`: none. */
  metricsPort: number | undefined
  /** Where the metrics listener binds: loopback unless asked, whatever `--host` is. */
  metricsHost: string
  /** `--idempotency-ttl`: how long a create's Idempotency-Key is kept, in ms; undefined: the library's 24 h. */
  idempotencyTtlMs: number | undefined
}

export const LOG_FORMATS = ['json', 'pretty', 'off'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

function oneOf<T extends string>(known: readonly T[], text: string, from: string): T {
  if (!(known as readonly string[]).includes(text))
    throw new UsageError(`${from} must be one of ${known.join(', ')}, got "${text}"`)
  return text as T
}

/** The most `--workers` accepts as a number: beyond it, a typo more likely than a plan. */
const MAX_WORKERS = 256

/**
 * The keys of a keys file: one key or `sha256:` digest per line; blank lines
 * and lines starting with `#` are skipped. Messages name the line, never its
 * content (it is a secret).
 */
export function readKeysFile(path: string, from: string): string[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${from} ${path}: ${fileProblem(error as NodeJS.ErrnoException)}`)
  }
  const keys: string[] = []
  const lines = text.replace(/^\uFEFF/, '').split('\n')
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const problem = keyProblem(line)
    if (problem) throw new UsageError(`${from} ${path}, line ${index + 1}: ${problem}`)
    keys.push(line)
  }
  if (keys.length === 0) throw new UsageError(`${from} ${path} holds no key`)
  return keys
}

/** A failed file read in words, with the code: `no such file (ENOENT)`. */
export function fileProblem(error: NodeJS.ErrnoException): string {
  const words = FILE_PROBLEMS[error.code ?? '']
  return words === undefined ? (error.code ?? error.message) : `${words} (${error.code})`
}
const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
}

/** `N` (1 to {@link MAX_WORKERS}) or `auto`: one worker per CPU this process may use. */
function parseWorkers(text: string, from: string): number {
  if (text === 'auto') return availableParallelism()
  const workers = /^[0-9]{1,3}$/.test(text) ? Number(text) : Number.NaN
  if (!(workers >= 1 && workers <= MAX_WORKERS))
    throw new UsageError(`${from} must be a number of processes from 1 to ${MAX_WORKERS}, or auto, got "${text}"`)
  return workers
}

/**
 * `--public-url 'https://api.example.org/v1 Production'`: the URL, then an
 * optional description after the first space. The URL is absolute (http or
 * https) or a path; a trailing `/` is dropped.
 */
export function parsePublicUrl(text: string, from = '--public-url'): { url: string; description?: string } {
  const [, url = '', description = ''] = /^\s*(\S*)\s*(.*?)\s*$/s.exec(text) ?? []
  const problem = serverUrlProblem(url)
  if (problem !== undefined) {
    // The message shows no password: a flag is on screen, in `ps` and in logs.
    throw new UsageError(`${from} must be ${problem}, then an optional description, got "${redactedUrl(text)}"`)
  }
  const trimmed = trimSlashes(url) || '/'
  return description ? { url: trimmed, description } : { url: trimmed }
}

/** A count or a time in ms: a whole number from 0 to `max`. */
function parseLimit(text: string | undefined, from: string, max: number): number | undefined {
  if (text === undefined) return undefined
  const value = /^[0-9]{1,9}$/.test(text) ? Number(text) : Number.NaN
  if (!(value >= 0 && value <= max))
    throw new UsageError(`${from} must be a whole number from 0 to ${max}, got "${text}"`)
  return value
}

/** `--idempotency-ttl`: 1 ms to 366 days, as `createPetstore` takes `idempotencyTtl`. */
function parseTtl(text: string | undefined, from: string): number | undefined {
  if (text === undefined) return undefined
  const ms = durationMs(text, 1, MAX_IDEMPOTENCY_TTL_MS, '366d')
  if (typeof ms === 'string') throw new UsageError(`${from} must be ${ms}, got "${text}"`)
  return ms
}

/** Unset or blank: no stats line; else a whole number of ms from 100 (`1.5` printed a line a millisecond). */
function parseStatsInterval(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const value = parseLimit(text.trim(), 'PETSTORE_STATS_INTERVAL_MS', 3_600_000) as number
  if (value < 100) throw new UsageError(`PETSTORE_STATS_INTERVAL_MS must be at least 100 (ms), got "${text}"`)
  return value
}

/** A host to bind: given, it must say something (`--host ''` would bind every interface). */
function parseHost(text: string | undefined, from: string): string | undefined {
  if (text !== undefined && text.trim() === '')
    throw new UsageError(`${from} must not be empty; 0.0.0.0 binds every interface`)
  return text
}

/**
 * `--cors`: `*`, or an origin exactly as browsers send it in `Origin` (scheme, host, and a port
 * only when not the default), which is what it is compared with; any other text would match no
 * browser, silently.
 */
function parseCorsOrigin(text: string, from: string): string {
  const problem = text === '*' ? undefined : originProblem(text)
  if (problem) throw new UsageError(`${from} ${problem} (or '*')`)
  return text
}

function parsePort(text: string, from: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(`${from} must be a port number from 0 to 65535, got "${text}"`)
  return port
}

/**
 * Parses `argv` (without the node and script entries) and `env`.
 * Throws {@link UsageError} for anything it cannot run with.
 */
export function parseCli(argv: readonly string[], env: Record<string, string | undefined>): CliOptions {
  let values: ReturnType<typeof parse>['values']
  let tokens: ReturnType<typeof parse>['tokens'] = []
  try {
    ;({ values, tokens } = parse(argv))
  } catch (error) {
    // Asked for help with a mistake beside it (`--help --bogus`, `--port` without its value): help.
    const given = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length)
    values = {
      help: given.includes('--help') || given.includes('-h'),
      version: given.includes('--version') || given.includes('-v'),
    }
    if (!values.help && !values.version) throw usageOf(error as Error)
  }
  // Help and the version are printed whatever else the command line and the environment hold.
  if (values.help || values.version) {
    return { ...parseCli([], {}), help: values.help ?? false, version: values.version ?? false }
  }
  onceEach(tokens)
  if (values.key?.some((key) => key.trim() === '')) throw new UsageError('--key must not be empty')
  if (values['cursor-secret'] === '') throw new UsageError('--cursor-secret must not be empty')
  if (values['keys-file']?.trim() === '') throw new UsageError('--keys-file must not be empty')
  const given = withEnvironment(values, env)
  values = given.values
  const { from } = given
  const keysFile =
    values['keys-file'] !== undefined ? { path: values['keys-file'], from: from('keys-file') } : undefined
  const fixedKeys = (values.key ?? []).map((key) => key.trim()).filter((key) => key !== '')
  const keys = [...fixedKeys, ...(keysFile ? readKeysFile(keysFile.path, keysFile.from) : [])]
  const basePath = values['base-path'] ?? '/v1'
  const basePathWrong = basePathProblem(basePath)
  if (basePathWrong !== undefined) throw new UsageError(`${from('base-path')} ${basePathWrong}, got "${basePath}"`)
  const options: CliOptions = {
    port: values.port !== undefined ? parsePort(values.port, from('port')) : 8080,
    host: parseHost(values.host, from('host')) ?? '127.0.0.1',
    db: values.db ?? 'sqlite:./petstore.db',
    dbFrom: from('db'),
    dbIsDefault: values.db === undefined,
    keys: keys.map((key) => key.trim()).filter((key) => key !== ''),
    basePath: trimSlashes(basePath),
    cors: (values.cors ?? []).map((origin) => parseCorsOrigin(origin, from('cors'))),
    publicUrls: (values['public-url'] ?? []).map((url) => parsePublicUrl(url, from('public-url'))),
    docs: !values['no-docs'],
    cursorSecret: values['cursor-secret'] || undefined,
    workers: values.workers !== undefined ? parseWorkers(values.workers, from('workers')) : 1,
    maxConnections: parseLimit(values['max-connections'], from('max-connections'), 1_000_000),
    maxConnectionsPerAddress: parseLimit(
      values['max-connections-per-address'],
      from('max-connections-per-address'),
      1_000_000,
    ),
    firstRequestTimeoutMs: parseLimit(values['first-request-timeout'], from('first-request-timeout'), 3_600_000),
    statsIntervalMs: parseStatsInterval(env.PETSTORE_STATS_INTERVAL_MS),
    help: values.help ?? false,
    version: values.version ?? false,
    keysFile,
    fixedKeys,
    log:
      values.log !== undefined ? oneOf(LOG_FORMATS, values.log, from('log')) : process.stdout.isTTY ? 'pretty' : 'json',
    logLevel: oneOf(LOG_LEVELS, values['log-level'] ?? 'info', from('log-level')),
    metricsPort:
      values['metrics-port'] !== undefined ? parsePort(values['metrics-port'], from('metrics-port')) : undefined,
    // Not --host: `--host 0.0.0.0` publishes the API, and must not publish the metrics with it.
    metricsHost: parseHost(values['metrics-host'], from('metrics-host')) ?? '127.0.0.1',
    idempotencyTtlMs: parseTtl(values['idempotency-ttl'], from('idempotency-ttl')),
    ...parseTestControl(values, from, (message) => new UsageError(message)),
  }
  if (values['metrics-host'] !== undefined && options.metricsPort === undefined) {
    throw new UsageError(`${from('metrics-host')} needs --metrics-port`)
  }
  for (const key of options.keys) {
    const problem = keyProblem(key)
    if (problem) throw new UsageError(problem)
  }
  // Checked on what was asked, not on what `auto` gave: the same command must not work on one CPU and fail on two.
  const auto = values.workers === 'auto'
  if ((options.workers > 1 || auto) && (options.db === 'memory' || options.db === 'sqlite::memory:')) {
    throw new UsageError(
      `--db ${options.db} cannot be shared by several workers (each would hold pets of its own): ` +
        'use --workers 1, or sqlite:PATH or a server database',
    )
  }
  return options
}

type Flag = keyof typeof OPTIONS
type Values = ReturnType<typeof parse>['values']

/** The names these flags had before each flag got `PETSTORE_` and its own name; they still work, after it. */
const OLDER_NAMES: Partial<Record<Flag, string>> = {
  port: 'PORT',
  host: 'HOST',
  db: 'DATABASE_URL',
  key: 'PETSTORE_API_KEYS',
}

/**
 * The environment variables of `flag`, the first set winning: `PETSTORE_` and the flag in upper
 * snake case (`--test-control` is PETSTORE_TEST_CONTROL), then its older name, if any.
 */
export function environmentNames(flag: Flag): string[] {
  const own = `PETSTORE_${flag.toUpperCase().replaceAll('-', '_')}`
  const older = OLDER_NAMES[flag]
  return older === undefined ? [own] : [own, older]
}

/** What a comma-separated variable of a repeatable flag holds, for its message. */
const LIST_OF: Partial<Record<Flag, string>> = { key: 'key', cors: 'origin', 'public-url': 'URL' }

/**
 * `values` with each flag not given taken from its environment variable, and what each value came
 * from (`--port`, or PETSTORE_PORT), for messages. Set but blank is unset (`PORT=` in a compose file).
 * A repeatable flag's variable holds its values separated by commas; a switch's holds 1 or 0.
 */
function withEnvironment(
  values: Values,
  env: Record<string, string | undefined>,
): { values: Values; from: (flag: Flag) => string } {
  const sources = new Map<Flag, string>()
  const merged: Record<string, unknown> = { ...values }
  // Any key flag wins over every key variable: a command line that names its keys gets only those.
  const keysGiven = values.key !== undefined || values['keys-file'] !== undefined
  for (const flag of Object.keys(OPTIONS) as Flag[]) {
    if (values[flag] !== undefined || flag === 'help' || flag === 'version') continue
    if (keysGiven && (flag === 'key' || flag === 'keys-file')) continue
    const name = environmentNames(flag).find((name) => (env[name] ?? '').trim() !== '')
    if (name === undefined) continue
    const text = env[name] as string
    const option: { type: string; multiple?: boolean } = OPTIONS[flag]
    if (option.type === 'boolean') merged[flag] = parseSwitch(text, name)
    else if (option.multiple) {
      const list = text
        .split(',')
        .map((value) => value.trim())
        .filter((value) => value !== '')
      const noun = LIST_OF[flag] ?? 'value'
      if (list.length === 0) throw new UsageError(`${name} holds no ${noun}: give ${noun}s separated by commas`)
      merged[flag] = list
    } else merged[flag] = text
    sources.set(flag, name)
  }
  return { values: merged as Values, from: (flag) => sources.get(flag) ?? `--${flag}` }
}

/** A switch's variable: 1 or true is on, 0 or false is off. */
function parseSwitch(text: string, from: string): boolean {
  const value = text.trim().toLowerCase()
  if (value === '1' || value === 'true') return true
  if (value === '0' || value === 'false') return false
  throw new UsageError(`${from} must be 1 or 0, got "${text}"`)
}

/**
 * parseArgs' own message, on one line: it explains a value that starts with `-` (`--port -1`)
 * over three.
 */
function usageOf(error: Error): UsageError {
  const ambiguous = /^Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(error.message)
  if (ambiguous) {
    const flag = ambiguous[1] as string
    return new UsageError(`${flag} needs a value; write one that starts with "-" as ${flag}=VALUE`)
  }
  return new UsageError(error.message.split('\n', 1)[0] ?? error.message)
}

/**
 * Refuses a flag of one value given twice (`--port 80 --port 8080`): parseArgs keeps the last,
 * which a wrapper script appending its own flags would override without a word.
 */
function onceEach(tokens: ReturnType<typeof parse>['tokens']): void {
  const seen = new Set<string>()
  for (const token of tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue
    if ((OPTIONS as Record<string, { multiple?: boolean }>)[token.name]?.multiple === true) continue
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given twice; give it once`)
    seen.add(token.name)
  }
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  db: { type: 'string' },
  key: { type: 'string', multiple: true },
  'keys-file': { type: 'string' },
  'base-path': { type: 'string' },
  cors: { type: 'string', multiple: true },
  'public-url': { type: 'string', multiple: true },
  'no-docs': { type: 'boolean' },
  'cursor-secret': { type: 'string' },
  workers: { type: 'string' },
  'max-connections': { type: 'string' },
  'max-connections-per-address': { type: 'string' },
  'first-request-timeout': { type: 'string' },
  log: { type: 'string' },
  'log-level': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  seed: { type: 'string' },
  'test-control': { type: 'boolean' },
  faults: { type: 'string' },
  latency: { type: 'string' },
  'fault-seed': { type: 'string' },
  'max-namespaces': { type: 'string' },
  'journal-size': { type: 'string' },
  'idempotency-ttl': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const satisfies ParseArgsConfig['options']

/** Every flag of the binary, by its long name (`test-control`). */
export const FLAGS = Object.keys(OPTIONS) as Flag[]

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], strict: true, allowPositionals: false, tokens: true, options: OPTIONS })
}
