/**
 * Reading a Node request's body whole, as text, with one object and one
 * promise per read and listeners every request shares.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { tooLarge, utf8Text } from '../../src/http/body.js'

/** Where a request read whole keeps its {@link BodyRead}, for the listeners every request shares. */
const READING = Symbol('petstore-server.body-read')
type Reading = IncomingMessage & { [READING]?: BodyRead | undefined }

/**
 * One body read whole ({@link readBodyText}). The listeners are module-level
 * functions shared by every request, so a read costs this one object and one
 * promise, where an async iterator would cost closures, an iterator and a
 * promise per chunk.
 */
class BodyRead {
  /** The first chunk, kept as it is: a small body arrives in one. */
  first: Buffer | undefined = undefined
  /** Every chunk, once a second one has come. */
  chunks: Buffer[] | undefined = undefined
  size = 0

  constructor(
    readonly maxBytes: number,
    readonly resolve: (text: string) => void,
    readonly reject: (error: Error) => void,
  ) {}
}

/**
 * Ends a read that stops early (413, a broken-off body): the listeners off and the stream paused, not
 * destroyed as Node's own async iterator would, so the socket lives on and the answer can still be written.
 */
function stopReading(request: Reading): BodyRead {
  const read = request[READING] as BodyRead
  request[READING] = undefined
  request.off('data', onBodyData).off('end', onBodyEnd).off('close', onBodyClose)
  request.pause()
  return read
}

function onBodyData(this: Reading, chunk: Buffer): void {
  const read = this[READING] as BodyRead
  read.size += chunk.byteLength
  // Stop at once: an oversized upload is never held, and the 413 can still be written.
  if (read.size > read.maxBytes) stopReading(this).reject(tooLarge(read.maxBytes))
  else if (read.first === undefined) read.first = chunk
  else if (read.chunks === undefined) read.chunks = [read.first, chunk]
  else read.chunks.push(chunk)
}

/**
 * The body is in. The listeners stay: nothing more comes through them but a 'close', which finds no
 * read and returns, and taking them off and pausing would cost every create.
 */
function onBodyEnd(this: Reading): void {
  const read = this[READING] as BodyRead
  this[READING] = undefined
  const bytes = read.chunks !== undefined ? Buffer.concat(read.chunks, read.size) : (read.first ?? new Uint8Array(0))
  let text: string
  try {
    text = utf8Text(bytes)
  } catch (error) {
    read.reject(error as Error)
    return
  }
  read.resolve(text)
}

/**
 * Before 'end', the client broke the body off (or its framing broke); after it, the request is
 * merely done. No 'error' listener: Node's request emits 'error' only to a listener, and its
 * 'close' follows either way: one listener fewer per create.
 */
function onBodyClose(this: Reading): void {
  if (this[READING] !== undefined) {
    stopReading(this).reject(new Error('the client closed the connection before the body ended'))
  }
}

/**
 * `request`'s body read whole as UTF-8 text (`ApiRequest.readText`): rejects with the 413 past
 * `maxBytes`, the 400 of `utf8Text`, or a plain `Error` when the client breaks the body off.
 */
export function readBodyText(request: IncomingMessage, maxBytes: number): Promise<string> {
  const reading = request as Reading
  const read = new Promise<string>((resolve, reject) => {
    reading[READING] = new BodyRead(maxBytes, resolve, reject)
  })
  reading.on('data', onBodyData).on('end', onBodyEnd).on('close', onBodyClose)
  return read
}
