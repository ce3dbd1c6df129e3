/**
 * fast-check arbitraries of hostile requests: any method, paths under and
 * outside the base path (encoded, very long, with `..`), query strings
 * (repeats, huge numbers, unicode, empty values), headers (Authorization
 * variants, content types, absurd lengths) and bodies (random JSON, deep
 * nesting, huge numbers, wrong types, invalid UTF-8, truncated JSON), sent
 * whole, in chunks, or broken off.
 */
import fc from 'fast-check'
import { encodeCursor } from '../../bench/cursor.js'

/** The key configured in clear. */
export const KEY = 'fuzz-key-5d41402abc4b2a76'
/** The targets' `cursorSecret`: valid queries carry cursors signed with it. */
export const CURSOR_SECRET = 'fuzz-cursor-secret'
/** The key configured only by its digest (`sha256:…`). */
export const DIGEST_KEY = 'fuzz-digest-key-7e2b9c'
/** Largest body the fuzzed handler reads; some bodies are generated past it. */
export const MAX_BODY_BYTES = 64 * 1024

export type Transport = 'string' | 'bytes' | 'chunks' | 'broken'

export interface BodyCase {
  bytes: Uint8Array
  transport: Transport
  chunkSize: number
}

/** One request, as plain data, so that fast-check can shrink and print it. */
export interface RequestCase {
  method: string
  /** Path and query as written after the origin; the URL parser may normalize it. */
  target: string
  headers: Array<[string, string]>
  body: BodyCase | undefined
  /** The store fails (503) on every call of this case. */
  outage: boolean
  /** The client has gone before the handler sees the request (`request.signal` aborted). */
  aborted: boolean
}

const encoder = new TextEncoder()

/** Long strings printed as their start and length, so a failure report stays readable. */
function short(text: string): string {
  return text.length > 120 ? `${JSON.stringify(text.slice(0, 80))}…(${text.length} chars)` : JSON.stringify(text)
}

/** How a case is printed in a failure report. */
export function describeCase(c: RequestCase): string {
  const headers = c.headers.map(([name, value]) => `${name}: ${short(value)}`).join(', ')
  let body = 'no body'
  if (c.body) {
    const text = new TextDecoder().decode(c.body.bytes)
    body = `${c.body.transport} body (${c.body.bytes.byteLength} bytes, chunks of ${c.body.chunkSize}): ${short(text)}`
  }
  return `${c.method} ${short(c.target)} {${headers}} ${body}${c.outage ? ' [store outage]' : ''}${c.aborted ? ' [aborted]' : ''}`
}

/** Weighted choice, most weight first: `weighted([9, a], [1, b])`. */
const weighted = <T>(...choices: Array<[number, fc.Arbitrary<T>]>) =>
  fc.oneof(...choices.map(([weight, arbitrary]) => ({ weight, arbitrary })))

/** `value` with weight `yes`, else `undefined` with weight `no`. */
const sometimes = <T>(yes: number, value: fc.Arbitrary<T>, no: number) =>
  weighted<T | undefined>([yes, value], [no, fc.constant(undefined)])

const veryLong = (unit: string) => fc.constantFrom(1_000, 10_000, 100_000).map((n) => unit.repeat(n))

// ---- method

const method = weighted<string>(
  [10, fc.constantFrom('GET', 'POST', 'HEAD')],
  // Not `patch`: Node warns on it, once per process, in every test run.
  [4, fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'get', 'post', 'head', 'Post', 'pOsT')],
  [
    1,
    fc
      .stringMatching(/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,15}$/)
      .filter((name) => !/^(connect|trace|track|patch)$/i.test(name)),
  ],
)

// ---- path

const segment = weighted<string>(
  [6, fc.constantFrom('pets', 'openapi.json', 'v1')],
  [5, fc.integer({ min: -3, max: 40 }).map(String)],
  [
    3,
    fc.constantFrom(
      '0',
      '9007199254740991',
      '9007199254740993',
      '9223372036854775807',
      '9223372036854775808',
      '-9223372036854775809',
      '99999999999999999999999',
      '1e3',
      '1.5',
      '0x10',
      '+1',
      '01',
      '%31',
      '%2D1',
      ' 1',
      'null',
    ),
  ],
  [
    3,
    fc.constantFrom(
      '',
      '.',
      '..',
      '%2e%2e',
      '.%2E',
      'pets%2F1',
      '%00',
      '%ZZ',
      '%',
      '%E0%A4%A',
      '%F0%9F%90%88',
      '%C0%AF',
      ';',
      'pets;x=1',
      '~',
    ),
  ],
  [2, fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent)],
  [1, fc.string({ unit: 'binary', maxLength: 12 })],
  [1, fc.oneof(veryLong('a'), veryLong('9'), veryLong('/'), veryLong('%41'), veryLong('../'))],
)

const prefix = weighted<string>(
  [12, fc.constant('/v1')],
  [3, fc.constantFrom('', '/', '/V1', '//v1', '/v1/', '/v1/..', '/v2', '/v1pets', '/healthz', '/%76%31', '/./v1')],
)

const knownRoute = fc.constantFrom('/v1/pets', '/v1/pets/1', '/v1/pets/2', '/v1/openapi.json', '/v1/pets/')

const path = weighted<string>(
  [6, knownRoute],
  [
    5,
    fc
      .tuple(prefix, fc.array(segment, { maxLength: 4 }), fc.constantFrom('', '', '/', '//'))
      .map(([start, segments, trailing]) => `${start}${segments.map((s) => `/${s}`).join('')}${trailing}`),
  ],
)

// ---- query

const queryName = weighted<string>(
  [8, fc.constantFrom('limit', 'status', 'cursor')],
  [2, fc.constantFrom('LIMIT', 'x', '', 'limit[]', 'status ', 'cursor%00')],
  [1, fc.string({ maxLength: 6 })],
)

const queryValue = weighted<string>(
  [4, fc.integer({ min: -3, max: 120 }).map(String)],
  [3, fc.constantFrom('available', 'pending', 'sold', 'SOLD', 'Available', 'sold ', '')],
  // Well-formed, signed under another secret (or for another status): a cursor the target did not issue.
  [2, fc.maxSafeNat().map((id) => encodeCursor(id))],
  [1, fc.maxSafeNat().map((id) => encodeCursor(id, undefined, CURSOR_SECRET))],
  [
    2,
    fc.constantFrom(
      '1e2',
      '2.5',
      '99999999999999999999',
      '9'.repeat(400),
      'NaN',
      'Infinity',
      '0x10',
      ' 5',
      '+5',
      '%20',
      '%ZZ',
      'cDE',
      'p-1',
      '=',
      '&',
    ),
  ],
  [1, fc.string({ unit: 'grapheme', maxLength: 10 })],
  [1, fc.string({ unit: 'binary', maxLength: 10 })],
  [1, fc.oneof(veryLong('9'), veryLong('a'))],
)

/** A query string, `''` or `?…`, encoded properly or written raw (with stray `&`, `=`, `%`). */
const query = fc
  .tuple(fc.array(fc.tuple(queryName, queryValue), { maxLength: 5 }), fc.boolean(), fc.boolean())
  .map(([pairs, raw, questionMarkOnly]) => {
    if (pairs.length === 0) return questionMarkOnly ? '?' : ''
    if (raw) return `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`
    return `?${new URLSearchParams(pairs)}`
  })

const status = fc.constantFrom('available', 'pending', 'sold')

/** A query the list accepts, so that pages, filters and cursors reach the store. */
const validQuery = fc
  .record(
    {
      limit: sometimes(2, fc.integer({ min: 1, max: 100 }), 1),
      status: sometimes(1, status, 1),
      cursor: sometimes(1, fc.integer({ min: 0, max: 60 }), 2),
    },
    { noNullPrototype: true },
  )
  .map(({ cursor, ...values }) => {
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, String(value))
    if (cursor !== undefined) params.set('cursor', encodeCursor(cursor, values.status, CURSOR_SECRET))
    return `?${params}`
  })

// ---- headers

/** A character a header value may hold: Latin-1 without controls other than tab. */
const headerChar = weighted<string>(
  [8, fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code))],
  [1, fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code))],
  [1, fc.constant('\t')],
)
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength })

const token = weighted<string>(
  [6, fc.constantFrom(KEY, DIGEST_KEY)],
  [
    3,
    fc.constantFrom(
      `${KEY}x`,
      KEY.slice(0, -1),
      KEY.toUpperCase(),
      `sha256:${'0'.repeat(64)}`,
      DIGEST_KEY.slice(1),
      'null',
      '"',
    ),
  ],
  [2, headerText(40)],
)

const authorization = weighted<string>(
  [24, fc.constantFrom(`Bearer ${KEY}`, `Bearer ${DIGEST_KEY}`)],
  [
    6,
    fc
      .tuple(
        fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Token', 'Bearer:', 'Bearer,', ''),
        fc.constantFrom(' ', '  ', '\t', ''),
        token,
        fc.constantFrom('', ' ', ' x', ', Bearer x', '\t'),
      )
      .map((parts) => parts.join('')),
  ],
  [2, headerText(60)],
  [1, fc.constantFrom(1_000, 10_000, 100_000).map((n) => `Bearer ${'a'.repeat(n)}`)],
)

const contentType = weighted<string>(
  [10, fc.constantFrom('application/json')],
  [
    4,
    fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.pets+json',
      'application/json;charset=latin1',
      'application/json ; x="y"',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/+json',
      'json',
      '',
      ';',
      'application/json, text/plain',
    ),
  ],
  [1, headerText(30)],
  [1, veryLong('a').map((tail) => `application/json; x=${tail}`)],
)

const headerName = fc.oneof(
  fc.constantFrom('origin', 'accept', 'x-forwarded-proto', 'cookie', 'x-request-id', 'content-encoding', 'range'),
  fc.stringMatching(/^[a-z0-9-]{1,20}$/),
)

/** Headers of one request. `authorization` and `content-type` may also come twice (joined with `, `). */
const headers = fc
  .record(
    {
      authorization: sometimes(10, authorization, 1),
      secondAuthorization: sometimes(1, authorization, 20),
      contentType: sometimes(8, contentType, 1),
      contentLength: sometimes(1, fc.constantFrom('0', '1', '65537', '999999999999', 'abc', '-1', '1e9'), 15),
      others: fc.array(fc.tuple(headerName, weighted<string>([9, headerText(30)], [1, veryLong('x')])), {
        maxLength: 3,
      }),
    },
    { noNullPrototype: true },
  )
  .map(({ authorization, secondAuthorization, contentType, contentLength, others }) => {
    const list: Array<[string, string]> = []
    if (authorization !== undefined) list.push(['authorization', authorization])
    if (secondAuthorization !== undefined) list.push(['authorization', secondAuthorization])
    if (contentType !== undefined) list.push(['content-type', contentType])
    if (contentLength !== undefined) list.push(['content-length', contentLength])
    return [...list, ...others.filter(([name]) => name !== 'authorization')]
  })

// ---- bodies

/** JSON text of a value, or a number written as no JSON.stringify would. */
const rawNumber = weighted<string>(
  [5, fc.integer().map(String)],
  [3, fc.maxSafeInteger().map(String)],
  [2, fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n))],
  [
    3,
    fc.constantFrom(
      '1e400',
      '-1e400',
      '1.0',
      '1.5',
      '-0',
      '1E2',
      '9007199254740992',
      '-9007199254740992',
      '9007199254740993',
      '123456789012345678901234567890',
      '0.0000001e7',
      '1e-400',
    ),
  ],
)

const name = weighted<string>(
  [8, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 })],
  [
    2,
    fc.constantFrom(
      '',
      ' ',
      '\t\n',
      'x'.repeat(255),
      'x'.repeat(256),
      '🐈'.repeat(255),
      '🐈'.repeat(256),
      'e\u0301'.repeat(128),
      '\u0000',
      'a\ud800b',
      '\udc00',
      "Robert'); DROP TABLE petstore_pets;--",
      '\u202e',
      '\ufeff',
    ),
  ],
  [1, fc.string({ unit: 'binary', maxLength: 20 })],
  [1, fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 3 })],
)

/** A property value of a pet body, as JSON text: mostly right, sometimes of the wrong type. */
const field = (right: fc.Arbitrary<string>) =>
  weighted<string>(
    [20, right],
    [1, fc.constantFrom('null', 'true', '[]', '{}', '"1"', '1', '""', '[1]')],
    [1, fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value) ?? 'null')],
  )

/** A pet body: the right keys, mostly right values, sometimes extras (`id` too), missing or repeated keys. */
const petText = fc
  .record(
    {
      name: fc.option(field(name.map((n) => JSON.stringify(n))), { freq: 12, nil: undefined }),
      categoryId: fc.option(field(rawNumber), { freq: 12, nil: undefined }),
      status: fc.option(
        field(weighted([6, status], [1, fc.constantFrom('SOLD', 'lost', '')]).map((s) => JSON.stringify(s))),
        {
          freq: 2,
          nil: undefined,
        },
      ),
      extras: fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom('id', 'name', '__proto__', 'constructor', 'owner'), fc.string({ maxLength: 5 })),
          fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? 'null'),
        ),
        { maxLength: 2 },
      ),
    },
    { noNullPrototype: true },
  )
  .map(({ name, categoryId, status, extras }) => {
    const entries: string[] = []
    if (name !== undefined) entries.push(`"name":${name}`)
    if (categoryId !== undefined) entries.push(`"categoryId":${categoryId}`)
    if (status !== undefined) entries.push(`"status":${status}`)
    for (const [key, value] of extras) entries.push(`${JSON.stringify(key)}:${value}`)
    return `{${entries.join(',')}}`
  })

/** A body of a valid pet with a deeply nested value where it is ignored, or deep nesting alone. */
const deep = fc
  .tuple(fc.integer({ min: 100, max: 40_000 }), fc.constantFrom('array', 'object', 'in-pet', 'unclosed', 'mixed'))
  .map(([depth, shape]) => {
    switch (shape) {
      case 'array':
        return `${'['.repeat(depth)}${']'.repeat(depth)}`
      case 'object':
        return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
      case 'in-pet':
        return `{"name":"Deep","categoryId":1,"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`
      case 'unclosed':
        return '['.repeat(depth)
      default:
        return `${'[{"a":'.repeat(depth)}0${'}]'.repeat(depth)}`
    }
  })

const textBody = weighted<string>(
  [10, petText],
  [3, fc.json({ maxDepth: 4 })],
  [2, deep],
  [2, fc.constantFrom('[]', '"x"', 'null', '42', 'true', '{}', '[{"name":"x","categoryId":1}]', '', ' ', '\n\t')],
  [
    2,
    fc.tuple(petText, fc.nat()).map(([text, cut]) => text.slice(0, text.length > 1 ? cut % (text.length - 1) : 0)), // truncated JSON
  ],
  [1, petText.map((text) => `\ufeff${text}`)],
  [1, petText.map((text) => `${text}${' '.repeat(MAX_BODY_BYTES)}`)], // valid, but one byte too many
  [
    1,
    fc
      .constantFrom(MAX_BODY_BYTES - 40, MAX_BODY_BYTES)
      .map((n) => `{"name":"Pad","categoryId":2}${' '.repeat(n - 29)}`),
  ],
  [1, fc.string({ unit: 'binary', maxLength: 40 })],
)

/** Byte sequences that are no UTF-8: a stray continuation, an overlong `/`, a UTF-16 surrogate, a cut-off character. */
const invalidUtf8 = fc.constantFrom(
  [0xff],
  [0x80],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80],
)

const bodyBytes = weighted<Uint8Array>(
  [12, textBody.map((text) => encoder.encode(text))],
  [
    2,
    fc.tuple(petText, invalidUtf8, fc.nat()).map(([text, bad, at]) => {
      const bytes = encoder.encode(text)
      const cut = at % (bytes.length + 1)
      return new Uint8Array([...bytes.subarray(0, cut), ...bad, ...bytes.subarray(cut)])
    }),
  ],
  [1, fc.uint8Array({ maxLength: 64 })],
)

const body = fc.record(
  {
    bytes: bodyBytes,
    transport: weighted<Transport>(
      [6, fc.constantFrom('string', 'bytes')],
      [2, fc.constant('chunks')],
      [1, fc.constant('broken')],
    ),
    chunkSize: fc.integer({ min: 1, max: 8192 }),
  },
  { noNullPrototype: true },
)

type Fate = 'normal' | 'outage' | 'aborted'

/** Mostly nothing special; sometimes the store is down, or the client gone. */
const fate = weighted<Fate>([30, fc.constant('normal')], [2, fc.constant('outage')], [1, fc.constant('aborted')])

interface Parts {
  method: string
  path: string
  query: string
  headers: Array<[string, string]>
  body: BodyCase | undefined
  fate: Fate
}

/** A case from its parts; GET and HEAD requests cannot carry a body. */
const toCase = ({ method, path, query, headers, body, fate }: Parts): RequestCase => ({
  method,
  target: `${path}${query}`,
  headers,
  body: /^(get|head)$/i.test(method) ? undefined : body,
  outage: fate === 'outage',
  aborted: fate === 'aborted',
})

/** Anything at all. */
const anyRequest = fc.record(
  { method, path, query: sometimes(2, query, 1).map((q) => q ?? ''), headers, body: sometimes(2, body, 1), fate },
  { noNullPrototype: true },
)

/** Mostly a create: POST /v1/pets with some body, so that the body arbitraries reach the parser. */
const createRequest = fc.record(
  {
    method: weighted([8, fc.constant('POST')], [1, method]),
    path: weighted([8, fc.constant('/v1/pets')], [1, path]),
    query: sometimes(1, query, 6).map((q) => q ?? ''),
    headers,
    body: sometimes(12, body, 1),
    fate,
  },
  { noNullPrototype: true },
)

/** Mostly a read: GET or HEAD of the list or of one pet, so that queries and ids reach validation. */
const readRequest = fc.record(
  {
    method: weighted([8, fc.constantFrom('GET', 'HEAD')], [1, method]),
    path: weighted([6, knownRoute], [2, path]),
    query: weighted([3, query], [3, validQuery], [1, fc.constant('')]),
    headers,
    body: sometimes(1, body, 6),
    fate,
  },
  { noNullPrototype: true },
)

/** Any request the fuzz sends. */
export const requestCase: fc.Arbitrary<RequestCase> = weighted(
  [4, createRequest],
  [4, readRequest],
  [3, anyRequest],
).map(toCase)

/** A name the API must accept: 1..255 code points, not only whitespace, valid Unicode, no U+0000. */
const validName = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 40 }),
    fc.constantFrom('🐈'.repeat(255), 'x'.repeat(255), ' x ', '\u0001', 'O\'Brien "; --'),
  )
  .filter((text) => /\S/.test(text) && [...text].length <= 255 && !text.includes('\u0000'))

/** A pet the API must accept and store exactly. */
export const validPet = fc
  .record(
    {
      name: validName,
      categoryId: fc.oneof(
        fc.integer(),
        fc.maxSafeInteger(),
        fc.constantFrom(0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
      ),
      status: fc.option(status, { nil: undefined }),
    },
    { noNullPrototype: true },
  )
  .map(({ status, ...pet }) => (status === undefined ? pet : { ...pet, status }))
