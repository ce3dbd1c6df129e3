/**
 * Running something after the current turn of the event loop, once the I/O
 * that is waiting has been read.
 *
 * @module
 */

/**
 * Runs `then` after the current turn of the event loop: `setImmediate` where there is one (Node,
 * Bun), runs after the turn's I/O; elsewhere (workerd, Deno) a zero-delay timer, which runs at the
 * next turn's timers.
 *
 * @example
 * ```ts
 * setTimeout(() => afterTurn(expire), ms) // a reply read in the same turn still wins
 * ```
 */
export const afterTurn: (then: () => void) => void =
  typeof globalThis.setImmediate === 'function' ? globalThis.setImmediate : (then) => setTimeout(then, 0)
