/**
 * Reading `--seed FILE`: a bounded read of a regular file, strict UTF-8, and
 * JSON parsed as the API parses a body (int64 fields digit for digit).
 * Nothing of the file is ever quoted in a message: a seed named by mistake may
 * be a file of secrets.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { INT64_KEYS, withExactIntegersEach } from '../src/for-binary.js'
import { fileProblem } from './options.js'

/** The largest seed file read: far past any test's fixture, and a bound on what a wrong path costs. */
export const SEED_MAX_BYTES = 16 * 1024 * 1024

/** A seed file that cannot be used: `reason` says why, without its content. */
export class SeedFileError extends Error {}

/**
 * The text of the file at `path`, or a {@link SeedFileError}: not a regular file (a FIFO
 * would block, `/dev/zero` never ends), more than `maxBytes`, or not UTF-8. A UTF-8 BOM is
 * skipped, as editors on Windows write one.
 */
export function readSeedText(path: string, maxBytes = SEED_MAX_BYTES): string {
  let fd: number
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer, for ever.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    throw new SeedFileError(fileProblem(error as NodeJS.ErrnoException))
  }
  try {
    const stat = fstatSync(fd)
    if (stat.isDirectory()) throw new SeedFileError('is a directory, not a file')
    if (!stat.isFile()) throw new SeedFileError('is not a regular file (a FIFO, a device or a socket)')
    // At most one byte past the cap: the size stat gives may be wrong (files in /proc say 0).
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total))
      const read = readSync(fd, chunk, 0, chunk.length, null)
      if (read === 0) break
      chunks.push(chunk.subarray(0, read))
      total += read
      if (total > maxBytes) throw new SeedFileError(`is larger than ${maxBytes} bytes`)
    }
    try {
      // fatal: bytes that are not UTF-8 are refused, as the API answers 400 for them; the BOM is dropped.
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, total))
    } catch {
      throw new SeedFileError('is not UTF-8 text')
    }
  } catch (error) {
    if (error instanceof SeedFileError) throw error
    throw new SeedFileError(fileProblem(error as NodeJS.ErrnoException))
  } finally {
    closeSync(fd)
  }
}

/**
 * `text` parsed as JSON, with every pet's int64 fields exact past 2^53 (a bigint), as
 * the API reads a body. A syntax error says where, never what: V8's message quotes the text.
 */
export function parseSeedText(text: string): unknown {
  let pets: unknown
  try {
    pets = JSON.parse(text)
  } catch {
    let at: number | undefined
    try {
      at = syntaxErrorAt(text)
    } catch {
      // A regular expression's own stack, on a string literal of megabytes: the error without its place.
    }
    throw new SeedFileError(`is not JSON${at === undefined ? '' : `: ${where(text, at)}`}`)
  }
  return withExactIntegersEach(text, pets, INT64_KEYS)
}

/** `line L, column C` of offset `at` in `text`, or the end. */
function where(text: string, at: number): string {
  if (at >= text.length) return 'it ends too soon'
  const line = text.slice(0, at).split('\n').length
  const column = at - text.lastIndexOf('\n', at - 1)
  return `unexpected character at line ${line}, column ${column}`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids them unescaped in a string, which is the point here.
const STRING = /"(?:[^"\\\u0000-\u001f]+|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const LITERAL = /true|false|null/y
const SPACE = /[ \t\n\r]*/y

/**
 * The offset of the first character that makes `text` not JSON (its length when it ends
 * too soon). Only called once JSON.parse has failed; iterative, so deep nesting is no trouble.
 */
function syntaxErrorAt(text: string): number {
  const open: string[] = []
  let expect: 'value' | 'first-value' | 'key' | 'first-key' | 'colon' | 'after' = 'value'
  let at = 0
  const match = (pattern: RegExp) => {
    pattern.lastIndex = at
    if (!pattern.test(text)) return false
    at = pattern.lastIndex
    return true
  }
  for (;;) {
    match(SPACE)
    if (at >= text.length) return text.length
    const char = text[at]
    if (expect === 'after') {
      const top = open.at(-1)
      if (top === undefined) return at
      if (char === ',') expect = top === '{' ? 'key' : 'value'
      else if (char === (top === '{' ? '}' : ']')) open.pop()
      else return at
      at++
    } else if (expect === 'colon') {
      if (char !== ':') return at
      at++
      expect = 'value'
    } else if (expect === 'key' || expect === 'first-key') {
      if (char === '}' && expect === 'first-key') {
        open.pop()
        at++
        expect = 'after'
      } else if (match(STRING)) expect = 'colon'
      else return at
    } else if (char === ']' && expect === 'first-value') {
      open.pop()
      at++
      expect = 'after'
    } else if (char === '{' || char === '[') {
      open.push(char)
      at++
      expect = char === '{' ? 'first-key' : 'first-value'
    } else if (match(STRING) || match(NUMBER) || match(LITERAL)) expect = 'after'
    else return at
  }
}
