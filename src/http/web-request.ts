/**
 * A web `Request` as the API reads it: what a fetch handler hands the engine
 * on Bun, Deno, workerd, or under @whatwg-node/server.
 *
 * @module
 */

import type { AbortLike } from '../shared/deadline.js'
import { readLimited, tooLarge, utf8Text } from './body.js'
import type { ApiRequest } from './exchange.js'

/** The chunks of a web stream; leaving early releases the stream rather than cancelling it. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

/** The declared `Content-Length` of `request`; `NaN` when absent or not decimal. */
function declaredLength(request: Request): number {
  const declared = request.headers.get('content-length')
  return declared !== null && /^[0-9]+$/.test(declared) ? Number(declared) : Number.NaN
}

/**
 * A web `Request` as the API reads it. What the API may not need is read from
 * the request only when asked: under `@hono/node-server`, `request.body`
 * turns its light request into a full web `Request` (stream, headers,
 * signal), and `request.signal` makes an `AbortController`. A class, not an
 * object literal with getters (see `NodeApiRequest` in adapters/node/request.ts).
 */
class WebApiRequest implements ApiRequest {
  readonly method: string
  readonly url: string

  constructor(private readonly request: Request) {
    this.method = request.method
    this.url = request.url
  }

  get signal(): AbortLike {
    return this.request.signal
  }

  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  body(): AsyncIterable<Uint8Array> | null {
    const { request } = this
    // A positive declared length means a body: its chunks are made only if they are read.
    if (declaredLength(request) > 0) return { [Symbol.asyncIterator]: () => chunksOf(request.body as ReadableStream) }
    return request.body === null ? null : chunksOf(request.body)
  }

  readText(maxBytes: number): Promise<string> {
    const { request } = this
    // Within the limit, the body is taken whole, the carrier's own way: HTTP framing bounds it to its
    // declared length. Without one (chunked), the chunks are counted as they come.
    const length = declaredLength(request)
    if (!(length > 0 && length <= maxBytes)) {
      return readLimited(request.body === null ? [] : chunksOf(request.body), maxBytes).then(utf8Text)
    }
    return request.arrayBuffer().then((buffer) => {
      if (buffer.byteLength > maxBytes) throw tooLarge(maxBytes)
      return utf8Text(new Uint8Array(buffer))
    })
  }

  toRequest(): Request {
    return this.request
  }
}

/** A web `Request` as the API reads it. */
export const fromRequest = (request: Request): ApiRequest => new WebApiRequest(request)
