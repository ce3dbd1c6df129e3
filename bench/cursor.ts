// A cursor as the server spells it (src/api/cursor.ts), for the tools that build
// requests ahead of a server: bench/scale-http.ts and the fuzz tests.
import { createHmac, randomBytes } from 'node:crypto'

/** The secret the bench gives every server it starts (bench/run.ts sets it), else a random one. */
const CURSOR_SECRET = process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')

/**
 * `<id>.<generation>.<first 12 bytes of HMAC-SHA-256(secret,
 * "petstore-cursor-2|<status>|<generation>|<id>") in base64url>`. The generation is the store's:
 * 0 until its first reset or seed.
 *
 * @example
 * ```ts
 * encodeCursor(42, 'sold', 'a shared secret') // → '42.0.' + 16 characters
 * ```
 */
export function encodeCursor(lastId: number, status?: string, secret = CURSOR_SECRET, generation = 0): string {
  const tag = createHmac('sha256', secret)
    .update(`petstore-cursor-2|${status ?? ''}|${generation}|${lastId}`)
    .digest()
  return `${lastId}.${generation}.${tag.subarray(0, 12).toString('base64url')}`
}
