// Starts a server under test as a child process and learns its URL from the
// ready line it prints on stdout.
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { wholeNumber } from './whole-number.js'

/**
 * How long a server has to print its ready line: three minutes, as a server
 * under valgrind on a slow machine took more than one. PETSTORE_BENCH_READY_MS
 * sets it.
 */
const READY_TIMEOUT_MS = process.env.PETSTORE_BENCH_READY_MS?.trim()
  ? wholeNumber('PETSTORE_BENCH_READY_MS', process.env.PETSTORE_BENCH_READY_MS)
  : 180_000
const STOP_TIMEOUT_MS = 5_000
const TAIL_LINES = 20
const READY_LINE = /http:\/\/\S+:(\d+)\/v1\b/

/** Process groups started and not yet stopped; killed outright should this process exit first. */
const running = new Set<number>()
process.on('exit', () => {
  for (const pid of running) signalGroup(pid, 'SIGKILL')
})

/** A `--server NAME=COMMAND` option of bench:ab and bench:instructions: the name and the command's argv. */
export function serverSpec(spec: string): { name: string; command: string[] } {
  const at = spec.indexOf('=')
  if (at < 1) throw new Error(`--server wants NAME=COMMAND, got ${JSON.stringify(spec)}`)
  return {
    name: spec.slice(0, at),
    command: spec
      .slice(at + 1)
      .trim()
      .split(/\s+/),
  }
}

export interface ServerProcess {
  readonly name: string
  /** Always http://127.0.0.1:PORT/v1: only the port is taken from the ready line. */
  readonly baseUrl: string
  /** The process group the server runs in: its leader's pid. */
  readonly pid: number
  stop(): Promise<void>
}

/**
 * Spawns `command` (argv array, no shell) and resolves once it prints a line
 * containing http://HOST:PORT/v1. The host is ignored on purpose so the
 * benchmark never sends traffic anywhere but 127.0.0.1.
 */
export async function startServer(
  name: string,
  command: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>> = {},
): Promise<ServerProcess> {
  const [file, ...args] = command
  if (file === undefined) throw new Error(`${name}: empty command`)
  // Own process group, so stop() also reaches grandchildren (npx -> tsx -> node).
  const child = spawn(file, args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  if (child.pid !== undefined) running.add(child.pid)
  const tail: string[] = []
  const remember = (line: string): void => {
    tail.push(line)
    if (tail.length > TAIL_LINES) tail.shift()
  }
  // Both pipes are read for the whole run: a server that logs would block on a full pipe.
  const stdout = createInterface({ input: child.stdout })
  createInterface({ input: child.stderr }).on('line', remember)

  const stop = (): Promise<void> => stopGroup(child)
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)
      stdout.on('line', (line) => {
        remember(line)
        const port = READY_LINE.exec(line)?.[1]
        if (port !== undefined) {
          clearTimeout(timer)
          resolve(port)
        }
      })
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(error)
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`exited before ready (code ${code}, signal ${signal})`))
      })
    })
    return { name, baseUrl: `http://127.0.0.1:${port}/v1`, pid: child.pid as number, stop }
  } catch (error) {
    await stop()
    const output = tail.length > 0 ? `\n--- last output ---\n${tail.join('\n')}` : ''
    // The command may hold a database URL: never echo its credentials.
    const shown = command.join(' ').replace(/\/\/[^@/\s]*@/g, '//***@')
    throw new Error(`${name} (${shown}) failed to start: ${(error as Error).message}${output}`)
  }
}

async function stopGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid
  if (pid === undefined) return
  signalGroup(pid, 'SIGTERM')
  // Wait for the whole group, not just the leader: a wrapper like npx can exit
  // before the server it started.
  const deadline = Date.now() + STOP_TIMEOUT_MS
  while (groupAlive(pid) && Date.now() < deadline) await sleep(50)
  if (groupAlive(pid)) signalGroup(pid, 'SIGKILL')
  running.delete(pid)
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}
