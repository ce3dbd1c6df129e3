/**
 * `petstore-server --workers N`: N processes serving one port under
 * node:cluster, sharing one database.
 *
 * The primary has already checked the flags, the keys and the database when
 * {@link runPrimary} starts; it serves nothing itself. It forks N copies of
 * the binary (same arguments), each of which runs the plain single-process
 * server, except that it reports "ready" to the primary instead of printing
 * the ready line. The primary prints that line once, when all N are ready,
 * restarts workers that die, forwards SIGTERM / SIGINT, and exits 0 once all
 * workers have stopped.
 *
 * @module
 */
import cluster, { type Worker } from 'node:cluster'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Marks a process forked by {@link runPrimary}, so that only those behave as workers. */
const WORKER_ENV = 'PETSTORE_CLUSTER_WORKER'
/** The key the primary generated when none was configured: every worker must accept the one key printed. */
const KEY_ENV = 'PETSTORE_CLUSTER_KEY'
/** The cursor secret every worker signs with, so that a cursor one issued is accepted by all. */
const CURSOR_SECRET_ENV = 'PETSTORE_CLUSTER_CURSOR_SECRET'
/** The journal's ids: the worker's slot (0 to 255, none two live workers share) and the primary's start. */
const SLOT_ENV = 'PETSTORE_CLUSTER_SLOT'
const EPOCH_ENV = 'PETSTORE_CLUSTER_EPOCH'

/** Is this process a worker of {@link runPrimary}? */
export const inWorker = cluster.isWorker && process.env[WORKER_ENV] === '1'

/** The primary's workers exit 0 within 15 s of a signal (their own bound); this is the primary's. */
const STOP_TIMEOUT_MS = 20_000
/** Workers in a row that die before they listen, after which the primary stops trying. */
const MAX_START_FAILURES = 5
/** The first restart waits this long; each quick death after it doubles the wait, up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 4_000
/** A worker that served this long before it died was not crash-looping: the backoff starts over. */
const STABLE_MS = 10_000

interface ReadyMessage {
  petstore: 'ready'
  line: string
  /** The port the worker listens on: with `--port 0`, the one the ready line announces. */
  port: number
}

const isReady = (message: unknown): message is ReadyMessage =>
  typeof message === 'object' && message !== null && (message as ReadyMessage).petstore === 'ready'

/** A worker asks for the seed; the primary answers with the text it read at start. */
interface SeedMessage {
  petstore: 'seed'
  text: string
}
const isSeedAsk = (message: unknown) =>
  typeof message === 'object' && message !== null && (message as { petstore?: unknown }).petstore === 'seed?'
const isSeed = (message: unknown): message is SeedMessage =>
  typeof message === 'object' && message !== null && (message as SeedMessage).petstore === 'seed'

const log = (message: string) => process.stderr.write(`petstore-server: ${message}\n`)

/**
 * In a worker: the key the primary generated, if it generated one (and then
 * it has printed it; the worker must not print another).
 */
export function keyFromPrimary(): string | undefined {
  return inWorker ? process.env[KEY_ENV] || undefined : undefined
}

/** In a worker: the cursor secret the primary chose (configured or generated); the same for every worker. */
export function cursorSecretFromPrimary(): string | undefined {
  return inWorker ? process.env[CURSOR_SECRET_ENV] || undefined : undefined
}

/** In a worker: what makes its journal's ids unique and ordered across workers (see `Journal`). */
export function journalIdsFromPrimary(): { slot: number; epochMs: number } | undefined {
  if (!inWorker) return undefined
  return { slot: Number(process.env[SLOT_ENV]), epochMs: Number(process.env[EPOCH_ENV]) }
}

/**
 * In a worker: the seed file's text, as the primary read it at start. A worker never reads
 * the file: one changed or removed since would give workers different pets, or none.
 * Asked for, not pushed: a message sent before the worker listens for it would be lost.
 */
export function seedFromPrimary(): Promise<string> {
  return new Promise((resolve) => {
    const listener = (message: unknown) => {
      if (!isSeed(message)) return
      process.off('message', listener)
      resolve(message.text)
    }
    process.on('message', listener)
    process.send?.({ petstore: 'seed?' })
  })
}

/**
 * In a worker, once `server` listens: tells the primary, which prints
 * `readyLine` once all workers are ready. At exit the worker says on stderr
 * how many requests it answered, so that an operator (and the tests) can see
 * how the load was spread without anything added to the API.
 */
export function workerReady(readyLine: string, server: Server): void {
  let answered = 0
  server.on('request', () => {
    answered++
  })
  process.once('exit', () => {
    log(`worker ${cluster.worker?.id} (pid ${process.pid}) answered ${answered} requests`)
  })
  const { port } = server.address() as AddressInfo
  process.send?.({ petstore: 'ready', line: readyLine, port } satisfies ReadyMessage)
}

/** `args` with `--port port` in place of any `--port` they hold (it may be given once only). */
export function withPort(args: readonly string[], port: number): string[] {
  const kept: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === '--') return [...kept, '--port', String(port), ...args.slice(i)]
    if (arg === '--port') i++
    else if (!arg.startsWith('--port=')) kept.push(arg)
  }
  return [...kept, '--port', String(port)]
}

/** What the primary knows of one worker. */
interface WorkerState {
  startedAt: number
  ready: boolean
  /** A key reload came while it was starting: it is told once it is ready. */
  reloadOwed: boolean
  /** Started with `--port` set to the port announced (see `fork`). */
  pinned: boolean
  /** The low byte of its journal's ids: a restarted worker takes a slot free again. */
  slot: number
}

/**
 * Runs the primary of `--workers`: forks `count` workers of this binary,
 * prints their ready line once, restarts the ones that die (with a growing
 * backoff; gives up after {@link MAX_START_FAILURES} in a row die before they
 * listen), and on SIGTERM / SIGINT (and SIGHUP, unless it re-reads a keys file) stops them
 * gracefully and exits 0.
 *
 * `generatedKey` is the key the primary generated and printed, when none was
 * configured; the workers receive it, and `cursorSecret`, through their environment.
 * `seed` is the seed file's text, read once: each worker asks for it at its start.
 */
export function runPrimary(
  count: number,
  generatedKey: string | undefined,
  cursorSecret: string,
  { reloadsKeys, seed }: { reloadsKeys: boolean; seed?: string | undefined },
): void {
  const env: Record<string, string> = {
    [WORKER_ENV]: '1',
    [CURSOR_SECRET_ENV]: cursorSecret,
    [EPOCH_ENV]: String(Date.now()),
  }
  if (generatedKey !== undefined) env[KEY_ENV] = generatedKey
  const workers = new Map<Worker, WorkerState>()
  const restarts = new Set<NodeJS.Timeout>()
  let phase: 'starting' | 'running' | 'stopping' = 'starting'
  let startFailures = 0
  let quickDeaths = 0
  let exitCode = 0
  /** The signal the primary forwarded: a worker still starting dies of it, which is no failure. */
  let forwarded: NodeJS.Signals | undefined
  /** The port of the ready line. */
  let announced: number | undefined
  const argv = process.argv.slice(2)

  const fork = () => {
    // Workers share the primary's socket only when they listen with the same port argument: a new one
    // takes that of those listening. With none left (--port 0), it is given the port announced, which a
    // bare port 0 would trade for a new free one.
    const listening = [...workers.values()].find((other) => other.ready)
    const pinned = announced !== undefined && (listening?.pinned ?? true)
    cluster.setupPrimary({ args: pinned ? withPort(argv, announced as number) : argv })
    const taken = new Set([...workers.values()].map((other) => other.slot))
    let slot = 0
    while (taken.has(slot)) slot++
    const worker = cluster.fork({ ...env, [SLOT_ENV]: String(slot) })
    const state: WorkerState = { startedAt: Date.now(), ready: false, reloadOwed: false, pinned, slot }
    workers.set(worker, state)
    // Without a listener, a failed fork or IPC error would end the primary.
    worker.on('error', (error) => log(`worker ${worker.id}: ${error.message}`))
    worker.on('message', (message: unknown) => {
      if (isSeedAsk(message) && seed !== undefined) {
        return void worker.send({ petstore: 'seed', text: seed } satisfies SeedMessage)
      }
      if (!isReady(message) || phase === 'stopping') return
      if (announced !== undefined && message.port !== announced) {
        // Those it was to share the socket with died while it started: it bound a port of its own.
        log(
          `worker ${worker.id} (pid ${worker.process.pid}) listens on port ${message.port}, not ${announced}; stopping it`,
        )
        return void worker.process.kill('SIGTERM')
      }
      announced = message.port
      state.ready = true
      startFailures = 0
      log(`worker ${worker.id} (pid ${worker.process.pid}) ready`)
      if (state.reloadOwed) worker.process.kill('SIGHUP')
      if (phase === 'starting' && workers.size === count && [...workers.values()].every((other) => other.ready)) {
        phase = 'running'
        process.stdout.write(`${message.line}\n`)
      }
    })
    worker.on('exit', (code, signal) => exited(worker, state, code, signal))
  }

  const exitIfDone = () => {
    if (workers.size === 0) process.exit(exitCode)
  }

  /** Stops every worker gracefully, then exits with `code` (a second signal or the timeout: at once, 1). */
  const stopAll = (signal: NodeJS.Signals, code: number) => {
    phase = 'stopping'
    exitCode = code
    forwarded = signal
    for (const timer of restarts) clearTimeout(timer)
    restarts.clear()
    for (const worker of workers.keys()) worker.process.kill(signal)
    setTimeout(() => {
      log(`workers not stopped within ${STOP_TIMEOUT_MS / 1000} s, killing them`)
      killAll()
    }, STOP_TIMEOUT_MS).unref()
    exitIfDone()
  }

  const killAll = (): never => {
    for (const worker of workers.keys()) worker.process.kill('SIGKILL')
    process.exit(1)
  }

  const giveUp = (reason: string) => {
    log(`${reason}; giving up`)
    stopAll('SIGTERM', 1)
  }

  const exited = (worker: Worker, state: WorkerState, code: number | null, signal: string | null) => {
    workers.delete(worker)
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    if (phase === 'stopping') {
      if (code !== 0 && signal !== forwarded) exitCode = 1
      return exitIfDone()
    }
    // Before the first ready line the primary has just checked flags, keys and database, so a
    // worker that cannot start (port taken, …) would fail again: stop now, with its own message above.
    if (phase === 'starting' && !state.ready) return giveUp(`worker ${worker.id} exited before it was ready (${how})`)
    if (!state.ready && ++startFailures >= MAX_START_FAILURES) {
      return giveUp(`${startFailures} workers in a row exited before they were ready (last: ${how})`)
    }
    const lived = Date.now() - state.startedAt
    quickDeaths = state.ready && lived >= STABLE_MS ? 0 : quickDeaths + 1
    const delay = Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, quickDeaths - 1), MAX_BACKOFF_MS)
    log(`worker ${worker.id} (pid ${worker.process.pid}) died (${how}); starting another in ${delay} ms`)
    const timer = setTimeout(() => {
      restarts.delete(timer)
      fork()
    }, delay)
    restarts.add(timer)
  }

  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === 'stopping') {
      log(`${signal} again, killing the workers`)
      killAll()
    }
    log(`${signal}, stopping ${workers.size} workers`)
    stopAll(signal, 0)
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  // Key rotation: every worker re-reads the keys file itself (bin/keys-reload.ts); the primary holds no keys.
  // Without a keys file, a hang-up stops everything, as SIGTERM does (and as each worker takes it).
  if (reloadsKeys) {
    process.on('SIGHUP', () => {
      if (phase === 'stopping') return
      // A worker still starting has no handler yet, and SIGHUP would kill it: it is told once ready.
      const starting = [...workers].filter(([, state]) => !state.ready)
      log(
        `SIGHUP, telling ${workers.size - starting.length} workers to re-read their keys` +
          (starting.length > 0 ? `, ${starting.length} more once ready` : ''),
      )
      for (const [worker, state] of workers) {
        if (state.ready) worker.process.kill('SIGHUP')
        else state.reloadOwed = true
      }
    })
  } else process.on('SIGHUP', onSignal)

  // Said once the signals are handled: from here a SIGHUP reloads (or stops), it does not kill.
  log(`starting ${count} workers`)
  for (let i = 0; i < count; i++) fork()
}
