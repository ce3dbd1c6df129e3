// parseTarget, parseOriginTarget and singleValues split URLs by hand where the WHATWG URL parser would change
// nothing: checked here against the parser itself, on crafted and on generated URLs.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import { parseOriginTarget, parseTarget, singleValues } from '../src/http/request-target.js'

/** What the parser says, or `'throws'`: for a URL of another scheme than http(s) too, which names nothing of ours. */
function byParser(url: string) {
  try {
    const { protocol, pathname, search } = new URL(url)
    if (protocol !== 'http:' && protocol !== 'https:') return 'throws'
    return { pathname, query: search.slice(1) }
  } catch {
    return 'throws'
  }
}

function byUs(url: string) {
  try {
    return parseTarget(url)
  } catch {
    return 'throws'
  }
}

const NAMES = ['limit', 'status', 'cursor', 'a']

/**
 * The origin-form target of `url` (from the first `/` after the authority), when the authority alone
 * parses and holds nothing the parser splits its own way: what the Node adapter hands over as `target`.
 */
function originForm(url: string): string | undefined {
  const match = /^https?:\/\/([^/?#\\@]*)(\/.*)$/s.exec(url)
  if (match === null || byParser(`http://${match[1]}/`) === 'throws') return undefined
  return match[2]
}

/**
 * Same path, or both throw; and every query parameter decodes alike (the raw query may differ in escapes).
 * Read from its origin-form target, the URL gives what parseTarget gives.
 */
function assertSame(url: string) {
  const expected = byParser(url)
  const ours = byUs(url)
  const origin = originForm(url)
  if (origin !== undefined) {
    let fromOrigin: ReturnType<typeof byUs>
    try {
      fromOrigin = parseOriginTarget(origin) ?? parseTarget(url)
    } catch {
      fromOrigin = 'throws'
    }
    assert.deepEqual(fromOrigin, ours, `${url} from ${origin}`)
  }
  if (expected === 'throws' || ours === 'throws') return assert.equal(ours, expected, url)
  assert.equal(ours.pathname, expected.pathname, url)
  const params = new URL(url).searchParams
  // singleValues gives each name's one value, or names the first of NAMES given more than once.
  const repeated = NAMES.find((name) => params.getAll(name).length > 1)
  const expectedValues = NAMES.map((name) => params.getAll(name)[0])
  assert.deepEqual(singleValues(ours.query, NAMES), repeated ?? expectedValues, url)
}

describe('parseTarget and singleValues agree with the URL parser', () => {
  test('on crafted URLs', () => {
    const urls = [
      'http://127.0.0.1:8080/v1/pets',
      'http://127.0.0.1:8080/v1/pets?limit=20',
      'https://api.example.org/v1/pets?status=sold&limit=100&cursor=12.abcdefghijklmnop',
      'http://x/v1/pets?limit=2&limit=3&&status=&cursor',
      'http://x/v1/pets?limit=1%30&status=s%6Fld+x',
      'http://x/v1/pets?=&=a&limit==2',
      'http://x/v1/pets#frag?limit=2',
      'http://x/v1/pets?limit=2#frag',
      'http://x/v1/pets/%2e%2e/healthz',
      'http://x/v1/pets/./1',
      'http://x/v1/pets/../..',
      'http://x/v1/pets\\1',
      'http://x/v1/a b',
      'http://x/v1/pets?limit=1\t0',
      'http://x/v1/pets?limit=10 ',
      'http://x/v1/pets/%zz',
      'http://x/v1/pets/é?status=é',
      'http://x/v1/{a}`<>"',
      'http://user:pass@x/v1/pets',
      'http://x?y/v1/pets',
      'http://x#y/v1/pets',
      'http:///v1/pets',
      'http://x:99999/v1/pets',
      'http://1.2.3.999/v1/pets',
      'http://[::1]:80/v1/pets',
      'http://EXAMPLE.org/V1/Pets',
      'HTTP://x/v1/pets',
      'ftp://x/v1/pets',
      'http://x',
      'http://x?limit=2',
      '/v1/pets',
      '*',
    ]
    for (const url of urls) assertSame(url)
  })

  test('on generated URLs', () => {
    const pieces = [
      '/',
      'v1',
      'pets',
      '.',
      '..',
      '%2e',
      '%2F',
      '%',
      '%4',
      '\\',
      '?',
      '#',
      '&',
      '=',
      '+',
      ' ',
      '\t',
      '\n',
      'é',
      '😀',
      '\ud800',
      'limit',
      'status',
      'cursor',
      'a',
      '1',
      '@',
      ':',
      '[',
      ']',
      '{',
      '"',
      '~',
      '`',
      '^',
      '\x7f',
    ]
    const tail = fc.array(fc.constantFrom(...pieces), { maxLength: 14 }).map((parts) => parts.join(''))
    const authority = fc.constantFrom('x', '127.0.0.1:8080', 'h:1', '[::1]', 'a@b', 'x:70000', '')
    fc.assert(
      fc.property(fc.constantFrom('http://', 'https://'), authority, tail, (scheme, host, rest) => {
        assertSame(`${scheme}${host}/${rest}`)
      }),
      { numRuns: 3000 },
    )
  })

  test('keeps no more than a bounded set of hosts in memory', () => {
    // Many distinct hosts, each answered right: the cache is cleared when full, never wrong.
    for (let i = 0; i < 1000; i++) assertSame(`http://h${i}.example:${i}/v1/pets?limit=${i}`)
  })
})
