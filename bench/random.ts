// A small deterministic generator (xorshift32), so every run of a benchmark asks for the same ids.

/** Numbers in [0, 1) from `seed`, the same sequence for the same seed. */
export function random(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 2 ** 32
  }
}
