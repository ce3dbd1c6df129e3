/**
 * Waiting in a test for what another process, socket or timer does: one
 * polling loop for every test file.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Resolves once `condition` holds (it may answer with a promise), checking every 20 ms;
 * fails after `ms`, naming `what`.
 *
 * @example
 * ```ts
 * await until(() => server.stderr().includes('SIGTERM'), 'SIGTERM on stderr')
 * ```
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`not within ${ms / 1000} s: ${what}`)
    await sleep(20)
  }
}
