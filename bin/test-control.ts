/**
 * Test control at run time: the seed loaded at start, the reset route, and
 * the faults around the handler. Loaded only when one of its flags is given
 * (`petstore-server/testing` is not part of a plain start).
 *
 * @module
 */
import { randomInt } from 'node:crypto'
import type { Route } from '../src/for-binary.js'
import type { FetchHandler, ResettablePetStore } from '../src/index.js'
import type { JournalReader } from '../src/testing.js'
import { parseSeedText, readSeedText, SeedFileError } from './seed-file.js'
import type { TestControlOptions } from './test-control-options.js'

/** A line for stderr, then exit 1: what the binary does with it. */
export class SeedError extends Error {}

/** A seed file read: what it names it by, its text (what the primary hands to its workers), its pets. */
export interface SeedFile {
  where: string
  text: string
  pets: unknown
}

/** The seed of `text`, which the primary read from the file `where` names and checked. */
export const seedOfText = (where: string, text: string): SeedFile => ({ where, text, pets: parseSeedText(text) })

/** Reads the `--seed` file once; a {@link SeedError} names it and says what is wrong, never what it holds. */
export function readSeed(given: NonNullable<TestControlOptions['seed']>): SeedFile {
  const where = `${given.from} ${given.path}`
  try {
    return seedOfText(where, readSeedText(given.path))
  } catch (error) {
    if (error instanceof SeedFileError) throw new SeedError(`cannot read ${where}: ${error.message}`)
    throw error
  }
}

/**
 * Loads the seed into `store` when it holds no pet, and makes it what a reset puts back.
 * A store with pets is left as it is, said once (by the primary under --workers, which seeds
 * before the workers start; they only remember the seed).
 */
export async function loadSeed(store: ResettablePetStore, { where, pets }: SeedFile, quiet: boolean): Promise<void> {
  const { seed } = await import('../src/testing.js')
  let loaded: boolean
  try {
    loaded = await seed(store, pets as Parameters<typeof seed>[1])
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    throw new SeedError(`${where}: ${error.message.replace(/^seed: /, '')}`)
  }
  if (!loaded && !quiet) {
    process.stderr.write(`petstore-server: ${where}: the store holds pets already, left as it is\n`)
  }
}

const NO_CONTENT = () => ({ status: 204, headers: {}, body: null })

/**
 * `POST /__petstore/reset`: the seeded pets back, ids as at start, and the journal cleared (every
 * worker's). Not open: a key is asked.
 */
export const resetRoute = (store: ResettablePetStore, journal?: JournalReader): Route => ({
  method: 'POST',
  path: '/__petstore/reset',
  handler: () =>
    store
      .reset()
      .then(() => journal?.clear())
      .then(NO_CONTENT),
})

/**
 * With `--test-control`, the request journal: what wraps the handler to record into it, and the
 * reader that its routes and the reset use (under `--workers`, the merged journal of all workers).
 */
export async function journalOf(
  options: TestControlOptions,
  ids: { slot: number; epochMs: number } | undefined,
): Promise<{ wrap: (handler: FetchHandler) => FetchHandler; reader: JournalReader } | undefined> {
  if (!options.testControl) return undefined
  const { Journal, withJournal } = await import('../src/testing.js')
  const journal = new Journal({ size: options.journalSize, ...ids })
  let reader: JournalReader = journal
  if (ids !== undefined) {
    const { answerJournalAsks, clusterReader } = await import('./cluster-journal.js')
    answerJournalAsks((scope) => (scope === '' ? journal : undefined))
    reader = clusterReader('')
  }
  return { wrap: (handler) => withJournal(handler, journal, { reader }), reader }
}

/**
 * What wraps each handler for `--faults`, `--latency` and `--test-control`'s `Prefer`;
 * `undefined` without them (the handler is left as it is). Without `--fault-seed`, the seed
 * is drawn here and said on stderr, so that the run can be replayed.
 */
export async function faultWrapper(
  options: TestControlOptions,
): Promise<((handler: FetchHandler) => FetchHandler) | undefined> {
  const drawn = Object.keys(options.faults).length > 0 || options.latency !== undefined
  if (!drawn && !options.testControl) return undefined
  const { withFaults } = await import('../src/testing.js')
  let seed = options.faultSeed
  if (drawn && seed === undefined) {
    seed = randomInt(0, 2 ** 32 - 1)
    process.stderr.write(`petstore-server: faults drawn with --fault-seed ${seed} (give it to replay this run)\n`)
  }
  const faultOptions = { faults: options.faults, latency: options.latency, seed, prefer: options.testControl }
  return (handler) => withFaults(handler, faultOptions)
}
