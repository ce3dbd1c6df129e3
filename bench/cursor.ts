// A cursor as the server spells it (src/api/cursor.ts), for the tools that build
// requests ahead of a server: bench/scale-http.ts and the fuzz tests.
import { createHmac, randomBytes } from 'node:crypto'

/** The secret the bench gives every server it starts (bench/run.ts sets it), else a random one. */
const CURSOR_SECRET = process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')

/**
 * `<id>.<first 12 bytes of HMAC-SHA-256(secret, "petstore-cursor-1|<status>|<id>") in base64url>`.
 *
 * @example
 * ```ts
 * encodeCursor(42, 'sold', 'a shared secret') // → '42.' + 16 characters
 * ```
 */
export function encodeCursor(lastId: number, status?: string, secret = CURSOR_SECRET): string {
  const tag = createHmac('sha256', secret)
    .update(`petstore-cursor-1|${status ?? ''}|${lastId}`)
    .digest()
  return `${lastId}.${tag.subarray(0, 12).toString('base64url')}`
}
