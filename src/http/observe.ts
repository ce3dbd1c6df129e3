/**
 * The `onResponse` hook: what every answered request looks like to a logger,
 * a metrics registry or a tracer. Never a key, a header or a body.
 *
 * @module
 */

import { utf8Length } from '../util/utf8-length.js'
import type { ApiAnswer } from './exchange.js'

/** One answered request, as `onResponse` sees it. */
export interface ResponseInfo {
  /** The `X-Request-Id` of the answer: the client's own when sane, else a generated one. */
  requestId: string
  method: string
  /** The request target as received: path and query, no host. */
  url: string
  /**
   * The route template with the base path, e.g. `/v1/pets/{petId}`; `null`
   * when the path is no route of the API (a 404).
   */
  route: string | null
  status: number
  /** The `code` of the JSON Error answer (`not_found`, `unavailable`, …); `null` for a success. */
  code: string | null
  /** Milliseconds from the request reaching the handler to its answer being ready to write. */
  durationMs: number
  /** Bytes of the answer's body (0 for HEAD and 204); counted when first read. */
  readonly bytes: number
  /**
   * Whether the client had gone before its answer was ready. The answer is
   * the one it would have had: a create that committed is a 201.
   */
  clientGone: boolean
  /** The kind of an injected fault (`withFaults` of `petstore-server/testing`, the `Petstore-Fault` header); absent otherwise. */
  readonly fault?: string | undefined
}

/**
 * A {@link ResponseInfo} whose `bytes` is counted only when read: counting a
 * list page's UTF-8 bytes cost more than the rest of the hook together, and
 * metrics never read it.
 */
class LazyResponseInfo implements ResponseInfo {
  // True private fields: a hook can never reach the body through them.
  #counted: number | undefined
  readonly #body: string | null

  constructor(
    readonly requestId: string,
    readonly method: string,
    readonly url: string,
    readonly route: string | null,
    readonly status: number,
    readonly code: string | null,
    readonly durationMs: number,
    body: string | null,
    readonly clientGone: boolean,
    readonly fault: string | undefined,
  ) {
    this.#body = body
  }

  get bytes(): number {
    this.#counted ??= this.#body === null ? 0 : utf8Length(this.#body)
    return this.#counted
  }

  toJSON(): ResponseInfo {
    const { requestId, method, url, route, status, code, durationMs, bytes, clientGone, fault } = this
    const info: ResponseInfo = { requestId, method, url, route, status, code, durationMs, bytes, clientGone }
    return fault === undefined ? info : { ...info, fault }
  }
}

/** Told of every answered request; its own failures (thrown or rejected) are ignored. */
export type OnResponse = (info: ResponseInfo) => void

/** The target of an absolute URL: `http://h/v1/pets?limit=2` → `/v1/pets?limit=2`. */
export function targetOf(url: string): string {
  const scheme = url.indexOf('://')
  if (scheme < 0) return url
  const path = url.indexOf('/', scheme + 3)
  return path < 0 ? '/' : url.slice(path)
}

/**
 * Calls `hook` with what is known of an answered request; a hook that throws
 * or rejects changes nothing.
 */
export function tell(
  hook: OnResponse,
  answer: ApiAnswer,
  request: { method: string; url: string; target?: string; signal?: { readonly aborted: boolean } | undefined },
  requestId: string,
  route: string | null,
  started: number,
): void {
  try {
    const result: unknown = hook(
      new LazyResponseInfo(
        requestId,
        request.method,
        request.target ?? targetOf(request.url),
        route,
        answer.status,
        answer.code ?? null,
        performance.now() - started,
        answer.body,
        request.signal?.aborted === true,
        answer.fault,
      ),
    )
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(result).catch(() => {})
    }
  } catch {}
}
