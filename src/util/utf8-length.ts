/**
 * The UTF-8 length of a text: what `Content-Length` says of an answer's body.
 *
 * @module
 */

const NON_ASCII = /[\u0080-\uffff]/

/** UTF-8 length of `text`, without a `TextEncoder` round trip (answers are mostly ASCII). */
export function utf8Length(text: string): number {
  // The regex engine scans far faster than a loop of charCodeAt: most answers are ASCII throughout.
  if (!NON_ASCII.test(text)) return text.length
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else {
      // 3 bytes for one UTF-16 unit, or 4 for a surrogate pair of two.
      bytes += 2
      if (code >= 0xd800 && code <= 0xdbff) i++
    }
  }
  return bytes
}
