/**
 * The answers the Node adapter writes by itself, outside the API (a 408 to a
 * slow client, a 431, a 400 for unparseable HTTP or a missing `Host`, a 405
 * to CONNECT, a 417): each carries an `X-Request-Id` and is told to
 * `onResponse` like every other answer, so that access logs and metrics see
 * them too.
 *
 * @module
 */
import type { ApiAnswer } from '../../src/http/exchange.js'
import { type OnResponse, tell } from '../../src/http/observe.js'
import { requestId } from '../../src/http/request-id.js'

/** The id of such an answer: the client's own when its headers were read and it is sane, else a new one. */
export function ownRequestId(sent: string | string[] | undefined): string {
  return requestId(typeof sent === 'string' ? sent : null)
}

/**
 * Tells `hook` (when there is one) of an answer written outside the API.
 * `method` and `url` are empty when Node could not read the request line
 * (a timeout, malformed HTTP); `started` is when the request reached the
 * adapter (`performance.now()`), or the moment of the answer when unknown.
 */
export function tellOwn(
  hook: OnResponse | undefined,
  request: { method: string; url: string },
  answer: Pick<ApiAnswer, 'status' | 'body'> & { code: string },
  id: string,
  started = performance.now(),
): void {
  if (hook === undefined) return
  tell(hook, { ...answer, headers: {} }, request, id, null, started)
}
