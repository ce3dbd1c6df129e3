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
