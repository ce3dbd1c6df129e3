/**
 * SHA-256, synchronously, on every runtime: @noble/hashes' (the cursors' HMAC is
 * built on it too). `crypto.subtle` answers in a later turn, through Node's
 * thread pool; the journal labels a key as it records a request, and the
 * API hashes a token or a payload with no await in between.
 *
 * @module
 */
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

/** The SHA-256 of `text`'s UTF-8 bytes. */
export const sha256Of = (text: string): Uint8Array => sha256(utf8ToBytes(text))

/**
 * The SHA-256 of `text`'s UTF-8 bytes, as 64 lower-case hex digits.
 *
 * @example
 * ```ts
 * sha256Hex('abc') // → 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 * ```
 */
export const sha256Hex = (text: string): string => bytesToHex(sha256Of(text))
