/**
 * The fetch handler: the one shape every part of the package serves, and how
 * the engine becomes one.
 *
 * @module
 */
import { type ApiAnswer, ENGINE, type Engine } from './exchange.js'
import { fromRequest } from './web-request.js'

/** A web-standard fetch handler: what Node (via an adapter), Bun and Deno serve. */
export type FetchHandler = (request: Request) => Promise<Response>

/**
 * Any fetch handler the adapters take: a {@link FetchHandler}, or one that
 * answers at once too. `petstore-server/node`, `/bun`, `/deno` and `/docs`
 * export it as their `FetchHandler`.
 *
 * @example
 * ```ts
 * import { serve } from 'petstore-server/node'
 *
 * await serve({ handler: () => new Response('hello') })
 * ```
 */
export type AnyFetchHandler = (
  ...request: Parameters<FetchHandler>
) => ReturnType<FetchHandler> | Awaited<ReturnType<FetchHandler>>

/** An answer as a web `Response`. */
export function toResponse({ status, headers, body }: ApiAnswer): Response {
  return new Response(body, { status, headers })
}

/** How much of a body left unread is read and dropped before its answer goes, at most. */
const DRAIN_BYTES = 1024 * 1024
const DRAIN_MS = 2_000
/**
 * Only workerd resets a connection whose request body was left unread; elsewhere the
 * handler stops reading at the limit, and the carrier (Node's lingering close) does the rest.
 */
const DRAINS = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers'

/**
 * Reads what is left of `request`'s body, up to {@link DRAIN_BYTES} and
 * {@link DRAIN_MS}, then cancels the rest: a client still writing its body
 * when workerd resets the connection loses the answer sent first (a 413, a
 * 401 to an upload).
 */
async function drain(request: Request): Promise<void> {
  const { body } = request
  if (body === null || body.locked) return
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = body.getReader()
  } catch {
    return
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), DRAIN_MS)
  })
  try {
    for (let read = 0; read <= DRAIN_BYTES; ) {
      const chunk = await Promise.race([reader.read(), late])
      if (chunk === 'late' || chunk.done) break
      read += chunk.value.byteLength
    }
    await reader.cancel()
  } catch {
    // The client broke the body off: there is nothing left to read.
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A fetch handler over `engine`, carrying it under {@link ENGINE} so that an
 * adapter of this package can skip the `Request`/`Response` round trip.
 */
export function toFetchHandler(engine: Engine): FetchHandler & { [ENGINE]: Engine } {
  const handler = async (request: Request) => {
    const answer = await engine(fromRequest(request))
    // A body the answer did not need (refused before or while reading it) is drained first.
    if (DRAINS && answer.status >= 400 && request.method !== 'GET' && request.method !== 'HEAD') {
      await drain(request)
    }
    return toResponse(answer)
  }
  return Object.assign(handler, { [ENGINE]: engine })
}
