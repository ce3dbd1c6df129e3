/**
 * Test control at run time: the seed loaded at start, the reset route, and
 * the faults around the handler. Loaded only when one of its flags is given
 * (`petstore-server/testing` is not part of a plain start).
 *
 * @module
 */
import { randomInt } from 'node:crypto'
import { withRoutes } from '../src/for-binary.js'
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

/** Wraps a handler with faults: the default namespace's, or namespace `name`'s, which draws from a seed of its own. */
export type FaultWrapper = (handler: FetchHandler, name?: string) => FetchHandler

/**
 * What wraps each handler for `--faults`, `--latency` and `--test-control`'s `Prefer`;
 * `undefined` without them (the handler is left as it is). Without `--fault-seed`, the seed
 * is drawn here and said on stderr, so that the run can be replayed.
 */
export async function faultWrapper(options: TestControlOptions): Promise<FaultWrapper | undefined> {
  const drawn = Object.keys(options.faults).length > 0 || options.latency !== undefined
  if (!drawn && !options.testControl) return undefined
  const { withFaults } = await import('../src/testing.js')
  const { namespaceSeed } = await import('../src/util/prng.js')
  let seed = options.faultSeed
  if (drawn && seed === undefined) {
    seed = randomInt(0, 2 ** 32 - 1)
    const namespaces = options.testControl ? '; each namespace draws from it and its name' : ''
    process.stderr.write(
      `petstore-server: faults drawn with --fault-seed ${seed} (give it to replay this run${namespaces})\n`,
    )
  }
  const faultOptions = { faults: options.faults, latency: options.latency, seed, prefer: options.testControl }
  return (handler, name) =>
    withFaults(handler, {
      ...faultOptions,
      seed: name === undefined || seed === undefined ? seed : namespaceSeed(seed, name),
    })
}

/** What `--test-control` serves beside the API: loaded only when it is given. */
export interface Control {
  /**
   * `handler`, the API of namespace `name` (`''`: the default one) over `store`, with the reset
   * route and the request journal of that namespace. `prefix` is `''` or `/ns/{name}`.
   */
  around(handler: FetchHandler, store: ResettablePetStore, prefix: string, name: string): FetchHandler
  /**
   * `handler`, the default namespace, serving namespaces `/ns/{name}/…` beside it: each made by
   * `make` over a store of its own from `store`, at most `max` at once.
   */
  namespaced(
    handler: FetchHandler,
    store: ResettablePetStore,
    make: (store: ResettablePetStore, prefix: string, name: string) => FetchHandler,
    max: number,
  ): FetchHandler
}

/**
 * Test control for `options`. Each namespace has a journal of its own; under `--workers` (`ids`
 * given) a journal's routes and a reset read and clear that namespace's journal in every worker.
 */
export async function loadControl(
  options: TestControlOptions,
  ids: { slot: number; epochMs: number } | undefined,
): Promise<Control> {
  const { resetRoute, withNamespaces } = await import('../src/testing/namespaces.js')
  const { Journal, withJournal } = await import('../src/testing.js')
  const journals = new Map<string, InstanceType<typeof Journal>>()
  const journalOf = (name: string) => {
    let journal = journals.get(name)
    if (journal === undefined) {
      journal = new Journal({ size: options.journalSize, ...ids })
      journals.set(name, journal)
    }
    return journal
  }
  let readerOf = (name: string): JournalReader => journalOf(name)
  if (ids !== undefined) {
    const { answerJournalAsks, clusterReader } = await import('./cluster-journal.js')
    answerJournalAsks((name) => journals.get(name))
    readerOf = clusterReader
  }
  return {
    around(handler, store, prefix, name) {
      const reader = readerOf(name)
      const reset = resetRoute(store, prefix, () => reader.clear())
      // The journal outermost, so that it records what the client got: faults and control routes included.
      return withJournal(withRoutes(handler, [reset]), journalOf(name), { prefix, reader })
    },
    namespaced: (handler, store, make, max) =>
      withNamespaces(handler, store, make, max, async (name) => {
        // Every worker's entries of a namespace go with it.
        await readerOf(name).clear()
        journals.delete(name)
      }),
  }
}
