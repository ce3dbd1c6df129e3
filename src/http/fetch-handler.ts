/**
 * The fetch handler: the one shape every part of the package serves.
 *
 * @module
 */

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
