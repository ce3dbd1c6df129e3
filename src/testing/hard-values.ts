/**
 * The values stores get wrong: names that break quoting and encodings, and
 * category ids at the edges of the number types.
 *
 * @module
 */

/** Names that break naive quoting, LIKE patterns, escaping, encodings or normalisation. No U+0000: PostgreSQL text cannot hold it. */
export const TRICKY_NAMES = [
  "O'Brien",
  "''",
  'say "hi"',
  '`backtick`',
  "'; DROP TABLE x; --",
  '"; DROP TABLE x; --',
  "Robert'); DROP TABLE petstore_pets;--",
  '%',
  '_',
  '%_%',
  '100% _real_',
  '\\',
  '\\\\',
  "\\'",
  '\\%',
  '\\_',
  'C:\\pets\\new\\n',
  '$1',
  '?',
  ':name',
  '@id',
  '/* comment */',
  '-- comment',
  '🐶',
  '🐕‍🦺 service dog',
  '👩‍👩‍👧‍👦',
  '🇫🇷',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  'café',
  'cafe\u0301',
  'Straße',
  'İstanbul',
  '日本語の名前',
  'שלום',
  'مرحبا',
  '\u200bzero width',
  '\ufeffbyte order mark',
  '\ufffd',
  '  spaces around  ',
  'trailing space ',
  'tab\there',
  'line\nbreak',
  'crlf\r\nend',
  'separators\u2028\u2029',
  'bell\u0007',
  'delete\u007f',
  'null',
  'NULL',
  'undefined',
  '0',
  '{}',
  '<script>alert(1)</script>',
]

/** Exactly 255 code points each: one, two, three and four UTF-8 bytes per character, and a mix. */
export const LONGEST_NAMES = [
  'a'.repeat(255),
  'é'.repeat(255),
  '日'.repeat(255),
  '🐶'.repeat(255),
  `${'x'.repeat(85)}${'ß'.repeat(85)}${'🐱'.repeat(85)}`,
]

/** Category ids at the edges of the safe integer range and of 32-bit columns. */
export const EDGE_CATEGORY_IDS = [
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  0,
  -1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 2,
]

/**
 * Category ids past ±(2^53−1), where a number is no longer exact: the int64 ends, and
 * 2^53 ± 1 (9007199254740993 becomes 9007199254740992 through a double). Bigints, the
 * form the API gives them in.
 */
export const INT64_CATEGORY_IDS = [
  2n ** 63n - 1n,
  -(2n ** 63n),
  -(2n ** 63n) + 1n,
  2n ** 53n,
  2n ** 53n + 1n,
  -(2n ** 53n),
  -(2n ** 53n) - 1n,
  2n ** 62n + 1n,
]
