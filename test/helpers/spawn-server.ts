/**
 * Spawning the `petstore-server` binary (through tsx) for end-to-end tests.
 *
 * `startServer` waits for the ready line on stdout; `runToExit` is for runs
 * that end by themselves (`--help`, `--version`, bad flags). Every child is
 * remembered so that `killAll()` (call it from an `after` hook) can end the
 * ones a failing test left behind.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { environmentNames, FLAGS } from '../../bin/options.js'

/** The repository root, two levels up from this file (`test/helpers/`). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

const BIN = 'bin/petstore-server.ts'
// Generous: a start through tsx compiles TypeScript, and CI's 2 cores run several at once.
const READY_TIMEOUT_MS = 40_000
const EXIT_TIMEOUT_MS = 40_000

/** Variables that would change what the binary does: passed to a child only when a test gives them. */
const SCRUBBED = [...FLAGS.flatMap((flag) => environmentNames(flag)), 'NODE_TEST_CONTEXT']

const children = new Set<ChildProcess>()

/** The parent's environment without {@link SCRUBBED}, plus `env`. */
function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env }
  for (const name of SCRUBBED) delete result[name]
  return { ...result, ...env }
}

/** How to run a TypeScript program: a binary, and the arguments that go before the script. */
export interface ScriptRuntime {
  command: string
  args: readonly string[]
  /** Variables it needs, under the test's own `env`. */
  env?: Record<string, string>
  /** Where it runs. @default the repository root */
  cwd?: string
}

/** This Node, through tsx (which honours tsconfig's `paths`): the default. */
export const NODE_TSX: ScriptRuntime = { command: process.execPath, args: ['--import', 'tsx'] }

function spawnScript(
  script: string,
  args: readonly string[],
  env?: Record<string, string>,
  runtime: ScriptRuntime = NODE_TSX,
): ChildProcess {
  const child = spawn(runtime.command, [...runtime.args, script, ...args], {
    cwd: runtime.cwd ?? repoRoot,
    env: childEnv({ ...runtime.env, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  child.once('exit', () => children.delete(child))
  child.stdout?.setEncoding('utf8')
  child.stderr?.setEncoding('utf8')
  return child
}

/** Resolves with how `child` ended (at once if it already has). */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

/** A running server, ready to answer. */
export interface RunningServer {
  /** The URL of the ready line, e.g. `http://127.0.0.1:40123/v1`. */
  url: string
  /** `http://HOST:PORT`. */
  origin: string
  host: string
  port: number
  child: ChildProcess
  /** Everything written on stderr so far. */
  stderr(): string
  /** Everything written on stdout so far. */
  stdout(): string
  /** Sends `signal` and resolves once the process has exited (SIGKILL after 10 s, then rejects). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const READY = /http:\/\/(\[[^\]\s]+\]|[^\s/:[\]]+):(\d+)(\/\S*)?/

/**
 * Starts the binary with `args` and resolves once it prints its ready line.
 * `onSpawn` gets the process at once, for a test that acts before it is ready.
 */
export function startServer(
  args: string[],
  env?: Record<string, string>,
  onSpawn?: (child: ChildProcess) => void,
): Promise<RunningServer> {
  return startScript(BIN, args, env, undefined, onSpawn)
}

/**
 * Starts a TypeScript program (path from the repository root) and resolves
 * once it prints a line with its `http://HOST:PORT/…` URL on stdout. It runs
 * on this Node through tsx unless `runtime` says otherwise (Bun, Deno: see
 * test/helpers/runtimes.ts).
 */
export function startScript(
  script: string,
  args: string[],
  env?: Record<string, string>,
  runtime?: ScriptRuntime,
  onSpawn?: (child: ChildProcess) => void,
): Promise<RunningServer> {
  const child = spawnScript(script, args, env, runtime)
  onSpawn?.(child)
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk: string) => {
    err += chunk
  })
  const describe = () => [script, ...args].join(' ')

  return new Promise<RunningServer>((resolve, reject) => {
    let settled = false
    const settle = (action: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      action()
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      settle(() =>
        reject(
          new Error(
            `${describe()}: no ready line on stdout within ${READY_TIMEOUT_MS / 1000} s\n` +
              `stdout: ${JSON.stringify(out)}\nstderr: ${JSON.stringify(err)}`,
          ),
        ),
      )
    }, READY_TIMEOUT_MS)
    child.once('error', (error) => settle(() => reject(error)))
    child.once('exit', (code, signal) =>
      settle(() =>
        reject(
          new Error(
            `${describe()} exited before it was ready (code ${code}, signal ${signal})\n` +
              `stdout: ${JSON.stringify(out)}\nstderr: ${JSON.stringify(err)}`,
          ),
        ),
      ),
    )
    child.stdout?.on('data', (chunk: string) => {
      out += chunk
      const match = READY.exec(out)
      if (!match || !out.slice(match.index).includes('\n')) return
      const [url, host = '', port = ''] = match
      const origin = `http://${host}:${port}`
      const server: RunningServer = {
        url,
        origin,
        host,
        port: Number(port),
        child,
        stderr: () => err,
        stdout: () => out,
        async stop(signal: NodeJS.Signals = 'SIGTERM') {
          const done = exited(child)
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          let timeout: NodeJS.Timeout | undefined
          const tooSlow = new Promise<never>((_, rejectStop) => {
            timeout = setTimeout(() => {
              child.kill('SIGKILL')
              rejectStop(new Error(`${describe()} did not exit within 10 s of ${signal}\nstderr: ${err}`))
            }, 10_000)
          })
          try {
            return await Promise.race([done, tooSlow])
          } finally {
            clearTimeout(timeout)
          }
        },
      }
      settle(() => resolve(server))
    })
  })
}

/** Runs the binary to its end (with a timeout) and resolves with its exit code and output. */
export function runToExit(
  args: string[],
  env?: Record<string, string>,
  timeoutMs = EXIT_TIMEOUT_MS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runScriptToExit(BIN, args, env, NODE_TSX, timeoutMs)
}

/** Runs a program (as {@link startScript} does) to its end, with a timeout; resolves with its exit code and output. */
export function runScriptToExit(
  script: string,
  args: string[],
  env?: Record<string, string>,
  runtime: ScriptRuntime = NODE_TSX,
  timeoutMs = EXIT_TIMEOUT_MS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnScript(script, args, env, runtime)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `${script} ${args.join(' ')} did not exit within ${timeoutMs / 1000} s\n` +
            `stdout: ${JSON.stringify(stdout)}\nstderr: ${JSON.stringify(stderr)}`,
        ),
      )
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // 'close' rather than 'exit': the output streams are fully read by then.
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/**
 * Pids of the workers that said they were ready on the primary's stderr (`worker N (pid P)
 * ready`), in order.
 */
export const readyPids = (stderr: string): number[] =>
  [...stderr.matchAll(/worker \d+ \(pid (\d+)\) ready/g)].map((match) => Number(match[1]))

/** The URL of the binary's metrics listener, once it has said it on stderr (`--metrics-port`). */
export const metricsUrl = (server: Pick<RunningServer, 'stderr'>): string | undefined =>
  /metrics on (http:\/\/\S+\/metrics)/.exec(server.stderr())?.[1]

/** Kills every child still running (for an `after` hook); resolves once they are gone. */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map((child) => {
      const done = exited(child)
      child.kill('SIGKILL')
      return done
    }),
  )
}

// Last resort: a test run that dies without its hooks does not leave servers behind.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})
