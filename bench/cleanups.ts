// The undo steps of a benchmark (the servers it started, the schemas and files it made), run
// newest first: after each part, at the end, on error, and on a signal.

/** Exit codes by signal, as a shell reports them (128 + the signal's number). */
const SIGNALS = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const

export class Cleanups {
  private readonly steps: Array<() => unknown> = []
  private running: Promise<void> = Promise.resolve()

  constructor(private readonly log: (line: string) => void) {}

  push(step: () => unknown): void {
    this.steps.push(step)
  }

  /** How many steps wait now: `run(size)` later undoes only what was added after. */
  get size(): number {
    return this.steps.length
  }

  /**
   * Runs the steps newest first until `downTo` are left; a step that fails is logged and the
   * others still run. A call made while another runs waits for it and then goes on (the end's
   * cleanup during a Ctrl-C's, or the reverse): no step runs twice, none is cut off by an exit.
   */
  run(downTo = 0): Promise<void> {
    this.running = this.running.then(async () => {
      while (this.steps.length > downTo) {
        const step = this.steps.pop() as () => unknown
        try {
          await step()
        } catch (error) {
          this.log(`cleanup: ${(error as Error).message}`)
        }
      }
    })
    return this.running
  }

  /**
   * On SIGINT, SIGTERM or SIGHUP: says so with `say(signal)`, runs every step, then exits with the
   * signal's code. A repeated signal (a second Ctrl-C) is ignored, so it cannot cut the cleanup short.
   */
  runOnSignals(say: (signal: string) => void): void {
    let stopping = false
    for (const [signal, code] of SIGNALS) {
      process.on(signal, () => {
        if (stopping) return
        stopping = true
        say(signal)
        void this.run().finally(() => process.exit(code))
      })
    }
  }
}
