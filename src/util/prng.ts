/**
 * A small seeded generator (mulberry32): the same seed gives the same
 * numbers, so a run of injected faults can be replayed. Not for secrets.
 *
 * @module
 */

/**
 * Numbers in [0, 1), one per call, from a 32-bit `seed`.
 *
 * @example
 * ```ts
 * const next = seededRandom(42)
 * next() // → the same number on every run with seed 42
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * The seed of namespace `name`'s draws, from the server's `seed`: FNV-1a over the name, started
 * from the seed. Each namespace replays alike whatever runs beside it.
 *
 * @example
 * ```ts
 * namespaceSeed(42, 'test-1') // → the same 32-bit number on every run
 * ```
 */
export function namespaceSeed(seed: number, name: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0
  return hash
}
