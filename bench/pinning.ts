// CPU pinning for the HTTP benchmarks: servers on CPU 0, this process (the load generator,
// autocannon runs in-process) on CPU 1, so they do not compete.
import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

/** Pins this process to CPU 1 and returns the prefix that starts a server on CPU 0 (empty when impossible). */
export function pinCpus(): { serverPrefix: string[]; how: string } {
  if (availableParallelism() < 2) return { serverPrefix: [], how: 'not pinned (fewer than 2 CPUs)' }
  try {
    execFileSync('taskset', ['--cpu-list', '0', 'true'], { stdio: 'ignore' })
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', '1', String(process.pid)], { stdio: 'ignore' })
  } catch {
    return { serverPrefix: [], how: 'not pinned (taskset missing or not allowed)' }
  }
  return { serverPrefix: ['taskset', '--cpu-list', '0'], how: 'servers on CPU 0, load generator on CPU 1' }
}
