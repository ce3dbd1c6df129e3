/**
 * The fetch handler: the one shape every part of the package serves.
 *
 * @module
 */

/** A web-standard fetch handler: what Node (via an adapter), Bun and Deno serve. */
export type FetchHandler = (request: Request) => Promise<Response>
