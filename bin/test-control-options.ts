/**
 * The binary's test-control flags: `--seed FILE`, `--test-control`,
 * `--faults KIND:RATE,…`, `--latency MS|MIN-MAX`, `--fault-seed N` and
 * `--journal-size N` (or their PETSTORE_ variables), parsed into one plain
 * object. Off unless asked for.
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
  /** `--max-namespaces N`: how many namespaces `/ns/{name}/…` may exist at once, with `--test-control`. */
  maxNamespaces: number
  /** `--journal-size N`: entries the request journal keeps (it records only under `--test-control`). */
  journalSize: number
}

/** How many namespaces may exist at once unless `--max-namespaces` says otherwise. */
export const DEFAULT_MAX_NAMESPACES = 1000

/** The journal's size unless `--journal-size` says otherwise; the most it takes (as the library's `Journal`). */
export const JOURNAL_SIZE = { default: 1000, max: 100_000 }

/** A command-line mistake, as the binary's UsageError (passed in, to keep one class). */
type Refuse = (message: string) => Error
/** What a flag's value came from, for messages: `--faults`, or PETSTORE_FAULTS. */
type From = (flag: 'seed' | 'faults' | 'latency' | 'fault-seed' | 'max-namespaces' | 'journal-size') => string

/** `unavailable:0.1,after-commit:0.05`: each kind once, rates from 0 to 1, at most 1 in all. */
function parseFaults(text: string, from: string, refuse: Refuse): Partial<Record<FaultKind, number>> {
  const faults: Partial<Record<FaultKind, number>> = {}
  let total = 0
  for (const part of text.split(',')) {
    const [kind = '', rate = '', extra] = part.trim().split(':')
    if (!(FAULT_KINDS as readonly string[]).includes(kind) || extra !== undefined) {
      throw refuse(`${from} takes KIND:RATE[,KIND:RATE…], KIND one of ${FAULT_KINDS.join(', ')}; got "${part}"`)
    }
    const value = /^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$/.test(rate) ? Number(rate) : Number.NaN
    if (Number.isNaN(value)) throw refuse(`${from} ${kind} needs a rate from 0 to 1, e.g. ${kind}:0.1; got "${part}"`)
    if (faults[kind as FaultKind] !== undefined) throw refuse(`${from} names ${kind} twice`)
    faults[kind as FaultKind] = value
    total += value
  }
  if (total > 1 + 1e-9) throw refuse(`${from} rates add up to ${Math.round(total * 1000) / 1000}, more than 1`)
  return faults
}

/** `250` or `50-300`: milliseconds, at most {@link MAX_DELAY_MS}. */
function parseLatency(text: string, from: string, refuse: Refuse): readonly [number, number] {
  const match = /^([0-9]{1,6})(?:-([0-9]{1,6}))?$/.exec(text)
  const min = Number(match?.[1])
  const max = match?.[2] === undefined ? min : Number(match[2])
  if (!match || !(min <= max && max <= MAX_DELAY_MS)) {
    throw refuse(
      `${from} must be MS or MIN-MAX, whole milliseconds up to ${MAX_DELAY_MS}, MIN at most MAX; got "${text}"`,
    )
  }
  return [min, max]
}

/** `--max-namespaces N`: a whole number from 0 (none) to 1,000,000. */
function parseMaxNamespaces(text: string | undefined, from: string, refuse: Refuse): number {
  if (text === undefined) return DEFAULT_MAX_NAMESPACES
  const value = /^[0-9]{1,7}$/.test(text) ? Number(text) : Number.NaN
  if (!(value <= 1_000_000)) throw refuse(`${from} must be a whole number from 0 to 1000000, got "${text}"`)
  return value
}

/** The test-control flags of `values` (parseArgs', with the environment's filled in); `from` names their source. */
export function parseTestControl(
  values: {
    seed?: string
    'test-control'?: boolean
    faults?: string
    latency?: string
    'fault-seed'?: string
    'max-namespaces'?: string
    'journal-size'?: string
  },
  from: From,
  refuse: Refuse,
): TestControlOptions {
  const seedPath = values.seed
  if (seedPath !== undefined && seedPath.trim() === '') throw refuse(`${from('seed')} must not be empty`)
  const faultSeedText = values['fault-seed']
  const faultSeed =
    faultSeedText !== undefined && /^[0-9]{1,10}$/.test(faultSeedText) ? Number(faultSeedText) : undefined
  if (faultSeedText !== undefined && !(faultSeed !== undefined && faultSeed <= 0xffffffff)) {
    throw refuse(`${from('fault-seed')} must be a whole number from 0 to 4294967295, got "${faultSeedText}"`)
  }
  const options: TestControlOptions = {
    seed: seedPath === undefined ? undefined : { path: seedPath, from: from('seed') },
    testControl: values['test-control'] ?? false,
    faults: values.faults === undefined ? {} : parseFaults(values.faults, from('faults'), refuse),
    latency: values.latency === undefined ? undefined : parseLatency(values.latency, from('latency'), refuse),
    faultSeed,
    maxNamespaces: parseMaxNamespaces(values['max-namespaces'], from('max-namespaces'), refuse),
    journalSize: JOURNAL_SIZE.default,
  }
  if (values['max-namespaces'] !== undefined && !options.testControl) {
    throw refuse(`${from('max-namespaces')} needs --test-control: namespaces are test control`)
  }
  const sizeText = values['journal-size']
  if (sizeText !== undefined) {
    const size = /^[0-9]{1,6}$/.test(sizeText) ? Number(sizeText) : Number.NaN
    if (!(size >= 1 && size <= JOURNAL_SIZE.max)) {
      throw refuse(`${from('journal-size')} must be a whole number from 1 to ${JOURNAL_SIZE.max}, got "${sizeText}"`)
    }
    if (!options.testControl)
      throw refuse(`${from('journal-size')} needs --test-control (the journal is off without it)`)
    options.journalSize = size
  }
  if (faultSeed !== undefined && Object.keys(options.faults).length === 0 && options.latency === undefined) {
    throw refuse(`${from('fault-seed')} needs --faults or --latency`)
  }
  return options
}
