/**
 * Running a container image with buildah, for the image's test (test/container/image.test.ts):
 * where no container runtime can start containers, `buildah run --isolation chroot` runs a
 * command in a working container, as the image's user, with its environment and working
 * directory, on the host's network.
 *
 * @module
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Runs buildah with `args`; resolves with its stdout, trimmed. */
export async function buildah(args: readonly string[]): Promise<string> {
  const { stdout } = await run('buildah', [...args], { maxBuffer: 16 * 1024 * 1024 })
  return stdout.trim()
}

/** Whether buildah is installed: why not, or false. */
export async function buildahMissing(): Promise<string | false> {
  try {
    await run('buildah', ['--version'])
    return false
  } catch (error) {
    return `buildah cannot run: ${(error as Error).message.split('\n', 1)[0]}`
  }
}

/** An image's configuration in Docker's format: the healthcheck exists only there. */
export interface ImageConfig {
  User?: string
  Env?: string[]
  Entrypoint?: string[] | null
  Cmd?: string[] | null
  WorkingDir?: string
  ExposedPorts?: Record<string, object>
  Volumes?: Record<string, object>
  Healthcheck?: { Test?: string[]; Interval?: number; Timeout?: number }
}

/** The configuration of a local image, from `buildah inspect`. */
export async function imageConfig(image: string): Promise<ImageConfig> {
  const inspected = JSON.parse(await buildah(['inspect', '--type', 'image', image]))
  return inspected.Docker.config as ImageConfig
}

/** What the image runs when started without a command: its entrypoint, then its command. */
export function startCommand(config: ImageConfig): string[] {
  return [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])]
}

const containers = new Set<string>()

/** A new working container of a local image (never pulled); {@link removeContainers} removes it. */
export async function newContainer(image: string): Promise<string> {
  const container = await buildah(['from', '--pull=never', '--quiet', image])
  containers.add(container)
  return container
}

/** Removes every container {@link newContainer} made. */
export async function removeContainers(): Promise<void> {
  await Promise.all([...containers].map((container) => buildah(['rm', container]).catch(() => undefined)))
  containers.clear()
}

/**
 * Drops the image's volume at each `host:container` bind's path from the container's configuration,
 * as a runtime does for `-v HOST:/data`: buildah run would mount a new anonymous volume over the bind.
 */
export async function bindOverVolumes(container: string, volumes: readonly string[]): Promise<void> {
  for (const volume of volumes) await buildah(['config', '--volume', `${volume.split(':')[1]}-`, container])
}

/** How to run a command in a container: extra variables, and `host:container` bind mounts. */
export interface RunOptions {
  env?: Record<string, string>
  volumes?: string[]
}

/** Starts `command` in `container` (stdout and stderr piped, as text). */
export function runIn(container: string, command: readonly string[], options: RunOptions = {}): ChildProcess {
  const args = ['run', '--isolation', 'chroot']
  for (const [name, value] of Object.entries(options.env ?? {})) args.push('--env', `${name}=${value}`)
  for (const volume of options.volumes ?? []) args.push('--volume', volume)
  const child = spawn('buildah', [...args, container, '--', ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.setEncoding('utf8')
  child.stderr.setEncoding('utf8')
  return child
}

/** The processes under `pid`, nearest first. */
function descendants(pid: number): number[] {
  const processes = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
  const found: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    const current = queue.shift() as number
    const children = processes.filter((candidate) => parentOf(candidate) === current)
    found.push(...children)
    queue.push(...children)
  }
  return found
}

/**
 * The pid of the process under `pid` that runs `command`: the container's own process, which a
 * container runtime would signal, where buildah sits between it and us. Its program may be
 * named by its path, found on the container's PATH (`node` runs as `/usr/local/bin/node`).
 */
export function descendantRunning(pid: number, command: readonly string[]): number | undefined {
  const [program = '', ...args] = command
  return descendants(pid).find((candidate) => {
    const [name = '', ...rest] = read(`/proc/${candidate}/cmdline`).split('\0').slice(0, -1)
    const same = name === program || (!program.includes('/') && name.endsWith(`/${program}`))
    return same && rest.length === args.length && rest.every((arg, index) => arg === args[index])
  })
}

/** SIGKILL to `pid` and every process under it: killed alone, buildah leaves the container's running. */
export function killTree(pid: number): void {
  for (const each of [...descendants(pid).reverse(), pid]) {
    try {
      process.kill(each, 'SIGKILL')
    } catch {
      // Gone already.
    }
  }
}

/** The real user id a process runs as, from /proc. */
export function uidOf(pid: number): number {
  const line = read(`/proc/${pid}/status`).match(/^Uid:\s+(\d+)/m)
  if (!line) throw new Error(`no Uid line for process ${pid}`)
  return Number(line[1])
}

function parentOf(pid: number): number | undefined {
  // `pid (name) state ppid …`: the name may hold spaces and parentheses, so read after the last `)`.
  const stat = read(`/proc/${pid}/stat`)
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields[1] === undefined ? undefined : Number(fields[1])
}

function read(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return '' // The process has gone meanwhile.
  }
}
