/**
 * Where the access log's lines go: gathered for up to 10 ms (or 16 KiB) and
 * while a write is under way, then written as one, at most one write in
 * flight, as pino's sonic-boom does.
 *
 * A batch per turn of the event loop cost a write(2) and a wake-up of the
 * reader for every few lines, most of the log's cost under load. The slower
 * the reader, the larger (and fewer) the writes, up to 64 KiB. `fs.write` from the thread pool was tried and
 * dropped: once Node has opened stdout on a pipe the descriptor is
 * non-blocking, and a full pipe then answers EAGAIN, which only polling gets
 * past; stdout's own stream waits for the pipe instead.
 *
 * @module
 */
/** A line writer with a way to wait until everything given to it is written. */
export interface LineWriter {
  (line: string): void
  /** Resolves once every line given so far is written (or the descriptor failed). */
  flush(): Promise<void>
  /** Hands what is gathered to the sink at once: for `process.on('exit')`, where no callback comes. */
  flushSync(): void
}

/** How long lines may wait for more to join them; a batch this large goes at once. */
const GATHER_MS = 10
const GATHER_BYTES = 16 * 1024

/** Lines held while the reader is behind; past it, lines are dropped (and counted) rather than memory grown. */
const MAX_PENDING_CHARS = 8 * 1024 * 1024

/** What the lines are written to: process.stdout, or any stream-like `write(text, callback)`. */
export interface LineSink {
  write(text: string, callback: (error?: Error | null) => void): unknown
}

/**
 * Writes lines to `sink` in batches of at most `maxBytes`, each cut at a
 * line's end: at most PIPE_BUF (4 KiB) keeps every write atomic, so that
 * processes sharing a pipe (workers) never interleave mid-line.
 */
export function lineWriter(sink: LineSink, maxBytes: number): LineWriter {
  let pending = ''
  let writing = false
  let scheduled = false
  let failed = false
  let dropped = 0
  let waiting: Array<() => void> = []
  let timer: NodeJS.Timeout | undefined

  /** The next batch: whole lines, at most `maxBytes` (a longer line goes alone). */
  function take(): string {
    let cut = pending.length
    if (cut > maxBytes) {
      cut = pending.lastIndexOf('\n', maxBytes - 1) + 1
      if (cut === 0) cut = pending.indexOf('\n') + 1 || pending.length
    }
    // Non-ASCII text takes more bytes than characters: fewer lines then.
    while (cut * 3 > maxBytes && Buffer.byteLength(pending.slice(0, cut)) > maxBytes) {
      const shorter = pending.lastIndexOf('\n', cut - 2) + 1
      if (shorter === 0) break
      cut = shorter
    }
    const chunk = pending.slice(0, cut)
    pending = pending.slice(cut)
    return chunk
  }

  function settle(): void {
    const done = waiting
    waiting = []
    for (const resolve of done) resolve()
  }

  function pump(): void {
    scheduled = false
    timer = undefined
    if (writing) return
    if (failed || pending === '') {
      settle()
      return
    }
    if (dropped > 0) {
      process.stderr.write(`petstore-server: the access log fell behind its reader; ${dropped} line(s) dropped\n`)
      dropped = 0
    }
    writing = true
    try {
      sink.write(take(), done)
    } catch (error) {
      done(error as Error)
    }
  }

  function done(error?: Error | null): void {
    writing = false
    if (error) {
      // The reader is gone (EPIPE) or the stream broke: the log stops, the server goes on.
      failed = true
      pending = ''
      settle()
      return
    }
    // Lines that came while this batch was written go now, together.
    pump()
  }

  const writer = ((line: string) => {
    if (failed) return
    if (pending.length > MAX_PENDING_CHARS) {
      dropped++
      return
    }
    pending += line
    if (writing) return
    if (pending.length >= GATHER_BYTES) {
      if (timer !== undefined) clearTimeout(timer)
      pump()
    } else if (!scheduled) {
      scheduled = true
      timer = setTimeout(pump, GATHER_MS)
    }
  }) as LineWriter
  writer.flush = () =>
    !writing && !scheduled && pending === ''
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiting.push(resolve)
        })
  writer.flushSync = () => {
    if (failed || pending === '') return
    const text = pending
    pending = ''
    try {
      // Queued behind a write in flight, in order; to a file or a pipe with room, written at once.
      sink.write(text, () => {})
    } catch {}
  }
  return writer
}
