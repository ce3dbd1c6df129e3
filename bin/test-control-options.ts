/**
 * The binary's test-control flags: `--seed FILE` (PETSTORE_SEED),
 * `--test-control`, `--faults KIND:RATE,…`, `--latency MS|MIN-MAX` and
 * `--fault-seed N`, parsed into one plain object. Off unless asked for.
 *
 * @module
 */
import { FAULT_KINDS, type FaultKind, MAX_DELAY_MS } from '../src/for-binary.js'

export interface TestControlOptions {
  /** `--seed FILE` or PETSTORE_SEED: the pets loaded into an empty store at start, and how it was named. */
  seed: { path: string; from: string } | undefined
  /** `--test-control`: `POST /__petstore/reset`, and `Prefer: fault=…`, `Prefer: delay=…`. */
  testControl: boolean
  faults: Partial<Record<FaultKind, number>>
  latency: readonly [number, number] | undefined
  /** `--fault-seed N`; undefined: a random one, said on stderr so that the run can be replayed. */
  faultSeed: number | undefined
}

/** A command-line mistake, as the binary's UsageError (passed in, to keep one class). */
type Refuse = (message: string) => Error

/** `unavailable:0.1,after-commit:0.05`: each kind once, rates from 0 to 1, at most 1 in all. */
function parseFaults(text: string, refuse: Refuse): Partial<Record<FaultKind, number>> {
  const faults: Partial<Record<FaultKind, number>> = {}
  let total = 0
  for (const part of text.split(',')) {
    const [kind = '', rate = '', extra] = part.trim().split(':')
    if (!(FAULT_KINDS as readonly string[]).includes(kind) || extra !== undefined) {
      throw refuse(`--faults takes KIND:RATE[,KIND:RATE…], KIND one of ${FAULT_KINDS.join(', ')}; got "${part}"`)
    }
    const value = /^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$/.test(rate) ? Number(rate) : Number.NaN
    if (Number.isNaN(value)) throw refuse(`--faults ${kind} needs a rate from 0 to 1, e.g. ${kind}:0.1; got "${part}"`)
    if (faults[kind as FaultKind] !== undefined) throw refuse(`--faults names ${kind} twice`)
    faults[kind as FaultKind] = value
    total += value
  }
  if (total > 1 + 1e-9) throw refuse(`--faults rates add up to ${Math.round(total * 1000) / 1000}, more than 1`)
  return faults
}

/** `250` or `50-300`: milliseconds, at most {@link MAX_DELAY_MS}. */
function parseLatency(text: string, refuse: Refuse): readonly [number, number] {
  const match = /^([0-9]{1,6})(?:-([0-9]{1,6}))?$/.exec(text)
  const min = Number(match?.[1])
  const max = match?.[2] === undefined ? min : Number(match[2])
  if (!match || !(min <= max && max <= MAX_DELAY_MS)) {
    throw refuse(
      `--latency must be MS or MIN-MAX, whole milliseconds up to ${MAX_DELAY_MS}, MIN at most MAX; got "${text}"`,
    )
  }
  return [min, max]
}

/** The test-control flags of `values` (parseArgs') and `env`. */
export function parseTestControl(
  values: { seed?: string; 'test-control'?: boolean; faults?: string; latency?: string; 'fault-seed'?: string },
  env: Record<string, string | undefined>,
  refuse: Refuse,
): TestControlOptions {
  const seedPath = values.seed ?? (env.PETSTORE_SEED || undefined)
  if (seedPath !== undefined && seedPath.trim() === '') throw refuse('--seed must not be empty')
  const faultSeedText = values['fault-seed']
  if (faultSeedText !== undefined && !/^[0-9]{1,10}$/.test(faultSeedText)) {
    throw refuse(`--fault-seed must be a whole number from 0 to 4294967295, got "${faultSeedText}"`)
  }
  const faultSeed = faultSeedText === undefined ? undefined : Number(faultSeedText)
  if (faultSeed !== undefined && faultSeed > 0xffffffff) {
    throw refuse(`--fault-seed must be a whole number from 0 to 4294967295, got "${faultSeedText}"`)
  }
  const options: TestControlOptions = {
    seed:
      seedPath === undefined
        ? undefined
        : { path: seedPath, from: values.seed !== undefined ? '--seed' : 'PETSTORE_SEED' },
    testControl: values['test-control'] ?? false,
    faults: values.faults === undefined ? {} : parseFaults(values.faults, refuse),
    latency: values.latency === undefined ? undefined : parseLatency(values.latency, refuse),
    faultSeed,
  }
  if (faultSeed !== undefined && Object.keys(options.faults).length === 0 && options.latency === undefined) {
    throw refuse('--fault-seed needs --faults or --latency')
  }
  return options
}
