/** Failures inside: what a broken or unreachable store, or a bad configuration, turns into. */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createPetstore, memoryStore, type PetStore, PetstoreError } from '../src/index.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { AUTH, assertError, call, KEY } from './helpers/client.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-errors-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** A store written by someone else that fails in every way a store can. */
function failingStore(failure: () => never): PetStore {
  return { create: async () => failure(), get: async () => failure(), list: async () => failure() }
}

describe('errors inside the handler', () => {
  it('answers 500 internal_error without the message, stack or SQL of the cause, and tells onError', async () => {
    const reported: unknown[] = []
    const secret = 'SELECT * FROM petstore_pets WHERE password = hunter2'
    const handler = createPetstore({
      store: failingStore(() => {
        throw new Error(secret)
      }),
      keys: [KEY],
      onError: (error) => reported.push(error),
    })
    for (const [path, init] of [
      ['/v1/pets', {}],
      ['/v1/pets/1', {}],
      ['/v1/pets', { json: { name: 'Rex', categoryId: 1 } }],
    ] as const) {
      const answer = await call(handler, path, init)
      assertError(answer, 500, 'internal_error')
      assert.ok(!answer.text.includes('hunter2') && !answer.text.includes('SELECT') && !answer.text.includes('at '))
    }
    assert.equal(reported.length, 3)
    assert.equal((reported[0] as Error).message, secret)
  })

  it('answers 503 unavailable when the store cannot be reached, and tells onError', async () => {
    const reported: unknown[] = []
    // A directory is no database file: SQLite reports SQLITE_CANTOPEN.
    const store = sqliteStore({ path: dir })
    const handler = createPetstore({ store, keys: [KEY], onError: (error) => reported.push(error) })
    assertError(await call(handler, '/v1/pets'), 503, 'unavailable')
    assertError(await call(handler, '/v1/pets', { json: { name: 'Rex', categoryId: 1 } }), 503, 'unavailable')
    assert.equal(reported.length, 2)
    await store.close?.()
  })

  it('does not report client errors to onError', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], onError: (error) => reported.push(error) })
    await call(handler, '/v1/pets', { auth: false })
    await call(handler, '/v1/pets/abc')
    await call(handler, '/v1/pets', { json: {} })
    assert.deepEqual(reported, [])
  })

  it('never throws, even when onError does', async () => {
    const handler = createPetstore({
      store: failingStore(() => {
        throw new TypeError('boom')
      }),
      keys: [KEY],
      onError: () => {
        throw new Error('the logger is broken too')
      },
    })
    assertError(await call(handler, '/v1/pets'), 500, 'internal_error')
  })

  it('lets a store answer with its own PetstoreError', async () => {
    const handler = createPetstore({
      store: failingStore(() => {
        throw PetstoreError.unavailable(new Error('pool timeout'))
      }),
      keys: [KEY],
      onError: () => {},
    })
    const answer = await call(handler, '/v1/pets')
    assertError(answer, 503, 'unavailable')
    assert.ok(!answer.text.includes('pool timeout'))
  })

  it('answers 500 when a key function throws, and the token is not in the report', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({
      store: memoryStore(),
      keys: () => {
        throw new Error('key service down')
      },
      onError: (error) => reported.push(error),
    })
    const answer = await call(handler, '/v1/pets', { headers: { authorization: 'Bearer very-secret-token' } })
    assertError(answer, 500, 'internal_error')
    assert.ok(!JSON.stringify(reported.map(String)).includes('very-secret-token'))
  })
})

describe('configuration', () => {
  it('fails closed: no keys, an empty key or a key with spaces throws at construction', () => {
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [] }), /keys/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [''] }), /key/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: ['a b'] }), /key/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: undefined as never }), /key/)
  })

  it('requires a store and a base path that starts with a slash', () => {
    assert.throws(() => createPetstore({ keys: [KEY] } as never), /store/)
    assert.throws(() => createPetstore({ store: memoryStore(), keys: [KEY], basePath: 'v1' }), /basePath/)
  })

  // Each of these was accepted once, and then answered every request with a 500, turned a limit
  // off, or let every origin in: a JavaScript caller, or a value read from config, gets no type check.
  it('refuses, at construction and naming the option, what would fail later or silently', () => {
    const store = memoryStore()
    const refused: [string, unknown, RegExp][] = [
      [
        'an option misspelt',
        { store, keys: [KEY], basepath: '/api' },
        /unknown option "basepath" \(did you mean "basePath"\?\)/,
      ],
      ['`key` for `keys`', { store, key: [KEY] }, /unknown option "key" \(did you mean "keys"\?\)/],
      ['options that are not an object', 'memory', /options must be an object/],
      ['a store that is not one', { store: 'memory', keys: [KEY] }, /store must be a PetStore/],
      ['a store factory not called', { store: memoryStore, keys: [KEY] }, /call it: memoryStore\(\)/],
      ['keys as a string', { store, keys: KEY }, /keys must be a list of API keys.*a list of one: \["/],
      [
        'maxBodyBytes NaN (no limit, once)',
        { store, keys: [KEY], maxBodyBytes: Number.NaN },
        /maxBodyBytes must be a whole number from 1/,
      ],
      ['maxBodyBytes 0', { store, keys: [KEY], maxBodyBytes: 0 }, /maxBodyBytes/],
      ['maxBodyBytes as a string', { store, keys: [KEY], maxBodyBytes: '1e9' }, /maxBodyBytes.*got "1e9"/],
      ['onError not a function', { store, keys: [KEY], onError: 'log' }, /onError must be a function, got "log"/],
      ['onResponse not a function', { store, keys: [KEY], onResponse: {} }, /onResponse must be a function/],
      ['cors: true', { store, keys: [KEY], cors: true }, /cors must be \{ origin/],
      [
        'cors: a misspelt name',
        { store, keys: [KEY], cors: { origins: ['https://a.example'] } },
        /unknown option "origins"/,
      ],
      [
        'cors: an origin with a path',
        { store, keys: [KEY], cors: { origin: 'https://a.example/' } },
        /did you mean https:\/\/a\.example\?/,
      ],
      [
        'cors: no scheme',
        { store, keys: [KEY], cors: { origin: ['app.example'] } },
        /must be an origin as browsers send it/,
      ],
      ['cors: * in a list', { store, keys: [KEY], cors: { origin: ['*'] } }, /stands alone/],
      ['cors: the origin null', { store, keys: [KEY], cors: { origin: ['null'] } }, /must not be "null"/],
      [
        'a server url with a password',
        { store, keys: [KEY], servers: [{ url: 'https://u:p@x.example/v1' }] },
        /without a user or password/,
      ],
      ['a base path with a query', { store, keys: [KEY], basePath: '/v1?x=1' }, /plain segments/],
      ['a base path with a dot segment', { store, keys: [KEY], basePath: '/v1/../v2' }, /plain segments/],
      // The router's pattern syntax (these answered the document and the 405s with a 500), an empty segment.
      ...['//v1', '/api/(v1)', '/v1+beta', '/a$b', '/v1//x', '/:v1', '/v*', '/v1%20'].map(
        (basePath): [string, unknown, RegExp] => [
          `the base path ${basePath}`,
          { store, keys: [KEY], basePath },
          /plain segments/,
        ],
      ),
      ['a base path that is not a string', { store, keys: [KEY], basePath: 5 }, /basePath must be a string/],
      ['a server url that is no URL', { store, keys: [KEY], servers: [{ url: 'not a url' }] }, /server url must be/],
      [
        'a server url of another scheme',
        { store, keys: [KEY], servers: [{ url: 'javascript:alert(1)' }] },
        /http\(s\)/,
      ],
      ['a requestTimeout as a string', { store, keys: [KEY], requestTimeout: '100' }, /got "100"/],
    ]
    for (const [what, options, message] of refused) {
      assert.throws(
        () => createPetstore(options as never),
        (error: Error) => error instanceof TypeError && message.test(error.message),
        what,
      )
    }
    // What is still taken: cors off written as false, a server at the root.
    assert.doesNotThrow(() => createPetstore({ store, keys: [KEY], cors: false as never }))
    assert.doesNotThrow(() => createPetstore({ store, keys: [KEY], basePath: '', servers: [{ url: '/' }] }))
  })

  it('a base path of every character it may hold: the document and the 405s are answered too', async () => {
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], basePath: '/api-2/v1.0_beta~x//' })
    assert.equal((await call(handler, '/api-2/v1.0_beta~x/openapi.json')).status, 200)
    assert.equal((await call(handler, '/api-2/v1.0_beta~x/pets/1', { method: 'DELETE', headers: AUTH })).status, 405)
    // `.` is a plain character, not the router's "any character".
    assert.equal((await call(handler, '/api-2/v1x0_beta~x/openapi.json')).status, 404)
  })

  it('a cors predicate lets an origin in only by answering true, not a promise', async () => {
    for (const [origin, allowed] of [
      [() => true, true],
      [async () => true, false],
      [() => 'yes', false],
    ] as const) {
      const handler = createPetstore({ store: memoryStore(), keys: [KEY], cors: { origin: origin as never } })
      const answer = await call(handler, '/v1/pets', {
        headers: { authorization: `Bearer ${KEY}`, origin: 'https://a.example' },
      })
      assert.equal(answer.status, 200)
      assert.equal(
        answer.headers.get('access-control-allow-origin'),
        allowed ? 'https://a.example' : null,
        String(origin),
      )
    }
  })
})

/** Waits for `ms`; resolves with `value`. */
const later = <T>(ms: number, value?: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value as T), ms))

/** A store whose every call answers with `answer()`, counting calls. */
function storeAnswering(answer: () => unknown): PetStore & { calls: number } {
  const store = {
    calls: 0,
    create: async () => answer(),
    get: async () => answer(),
    list: async () => answer(),
  }
  for (const name of ['create', 'get', 'list'] as const) {
    store[name] = async () => {
      store.calls++
      return answer()
    }
  }
  return store as never
}

describe('stores that throw anything', () => {
  const thrown: Array<[string, () => unknown]> = [
    ['a synchronous throw', () => undefined],
    ['null', () => null],
    ['undefined', () => undefined],
    ['a string', () => 'SELECT password FROM users'],
    [
      'an object whose getters throw',
      () =>
        Object.defineProperty({}, 'status', {
          get: () => {
            throw new Error('getter')
          },
        }),
    ],
    [
      'a forged PetstoreError with status 200',
      () => ({ [Symbol.for('petstore-server.PetstoreError')]: true, status: 200, code: 'ok', message: 'fine' }),
    ],
    [
      'a forged PetstoreError with status 99',
      () => ({ [Symbol.for('petstore-server.PetstoreError')]: true, status: 99, code: 'x', message: 'x' }),
    ],
    [
      'a PetstoreError with a header that cannot be sent',
      () => new PetstoreError(418, 'teapot', 'tea', { headers: { 'x-bad': 'a\nb' } }),
    ],
    [
      'a PetstoreError with details that cannot be serialized',
      () => new PetstoreError(400, 'validation_error', 'x', { details: [{ path: 'p', message: 1n as never }] }),
    ],
  ]
  for (const [label, make] of thrown) {
    it(`answers 500 internal_error for ${label}`, async () => {
      const reported: unknown[] = []
      const fail =
        label === 'a synchronous throw'
          ? () => {
              throw new Error('sync')
            }
          : () => Promise.reject(make())
      const handler = createPetstore({
        store: { create: fail as never, get: fail as never, list: fail as never },
        keys: [KEY],
        onError: (error) => reported.push(error),
      })
      for (const [path, init] of [
        ['/v1/pets', {}],
        ['/v1/pets/1', {}],
        ['/v1/pets', { json: { name: 'Rex', categoryId: 1 } }],
      ] as const) {
        const answer = await call(handler, path, init)
        assertError(answer, 500, 'internal_error')
        assert.equal(answer.headers.get('x-content-type-options'), 'nosniff')
        assert.ok(!answer.text.includes('SELECT') && !answer.text.includes('getter'))
      }
      assert.equal(reported.length, 3)
    })
  }
})

describe('stores that return malformed rows', () => {
  const pet = { id: 1, name: 'Rex', categoryId: 2 }
  const malformed: Array<[string, Partial<Record<'create' | 'get' | 'list', unknown>>]> = [
    ['an id as a string', { create: { ...pet, id: '1' }, get: { ...pet, id: '1' }, list: [{ ...pet, id: '1' }] }],
    ['no name', { create: { id: 1, categoryId: 2 }, get: { id: 1, categoryId: 2 }, list: [{ id: 1, categoryId: 2 }] }],
    [
      'an extra field',
      { create: { ...pet, password: 'x' }, get: { ...pet, password: 'x' }, list: [{ ...pet, password: 'x' }] },
    ],
    ['null', { create: null, get: null, list: [null] }],
    [
      'a status of NULL',
      { create: { ...pet, status: null }, get: { ...pet, status: null }, list: [{ ...pet, status: null }] },
    ],
    ['an unsafe id', { create: { ...pet, id: 2 ** 53 }, get: { ...pet, id: 0 }, list: [{ ...pet, id: -1 }] }],
    [
      // A store that keeps categoryId in a number: 2^53 + 1 came back as 2^53, a rounded value never goes out.
      'a categoryId beyond 2^53 as a number',
      {
        create: { ...pet, categoryId: 2 ** 53 },
        get: { ...pet, categoryId: -(2 ** 53) },
        list: [{ ...pet, categoryId: 2 ** 60 }],
      },
    ],
    [
      'a categoryId outside int64',
      { create: { ...pet, categoryId: 2n ** 63n }, list: [{ ...pet, categoryId: -(2n ** 64n) }] },
    ],
    ['another shape altogether', { create: [pet], get: 'Rex', list: { rows: [pet] } }],
    [
      'a pet of another id, rows out of order',
      {
        get: { ...pet, id: 9 },
        list: [
          { ...pet, id: 3 },
          { ...pet, id: 2 },
        ],
      },
    ],
    ['too many rows', { list: Array.from({ length: 30 }, (_, i) => ({ ...pet, id: i + 1 })) }],
  ]
  for (const [label, rows] of malformed) {
    it(`answers 500 internal_error, with a generic message, for ${label}`, async () => {
      const reported: unknown[] = []
      const answer = (method: 'create' | 'get' | 'list') => async () => (method in rows ? rows[method] : pet)
      const handler = createPetstore({
        store: { create: answer('create'), get: answer('get'), list: answer('list') } as never,
        keys: [KEY],
        onError: (error) => reported.push(error),
      })
      const requests = [
        ['create', '/v1/pets', { json: { name: 'Rex', categoryId: 2 } }],
        ['get', '/v1/pets/1', {}],
        ['list', '/v1/pets?limit=5', {}],
      ] as const
      for (const [method, path, init] of requests) {
        if (!(method in rows)) continue
        const response = await call(handler, path, init)
        assertError(response, 500, 'internal_error')
        assert.equal(response.body.message, 'The server failed to answer this request')
      }
      assert.ok(reported.length > 0)
      for (const error of reported) assert.match(String(error), /StoreContractError: store\.(create|get|list)/)
    })
  }

  it('still answers 404 for a pet the store does not have', async () => {
    const handler = createPetstore({ store: storeAnswering(() => undefined), keys: [KEY] })
    assertError(await call(handler, '/v1/pets/1'), 404, 'not_found')
  })
})

describe('requestTimeout', () => {
  it('answers 503 unavailable once a hanging store call passes it, and tells onError', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({
      store: storeAnswering(() => new Promise(() => {})),
      keys: [KEY],
      requestTimeout: 50,
      onError: (error) => reported.push(error),
    })
    const started = performance.now()
    const answer = await call(handler, '/v1/pets')
    const elapsed = performance.now() - started
    assertError(answer, 503, 'unavailable')
    assert.match(answer.body.message, /timed out/)
    assert.ok(elapsed >= 45 && elapsed < 1000, `answered after ${elapsed} ms`)
    assert.equal(reported.length, 1)
  })

  it('drops late results harmlessly: a late answer, a late rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      let created = 0
      const store: PetStore = {
        create: async (pet) => {
          await later(80)
          created++
          return { id: 1, ...pet }
        },
        get: () => later(80).then(() => Promise.reject(new Error('late failure'))),
        list: () => later(80).then(() => Promise.reject(PetstoreError.unavailable())),
      }
      const handler = createPetstore({ store, keys: [KEY], requestTimeout: 20, onError: () => {} })
      assertError(await call(handler, '/v1/pets', { json: { name: 'Rex', categoryId: 1 } }), 503, 'unavailable')
      assertError(await call(handler, '/v1/pets/1'), 503, 'unavailable')
      assertError(await call(handler, '/v1/pets'), 503, 'unavailable')
      await later(150)
      assert.equal(created, 1, 'the store finished its work; its answer was dropped')
      assert.deepEqual(unhandled, [])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('frees its timer as soon as the store answers', async () => {
    const handler = createPetstore({ store: memoryStore(), keys: [KEY], requestTimeout: 2 ** 31 - 1 })
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
    const before = timers()
    for (let i = 0; i < 5; i++) assert.equal((await call(handler, '/v1/pets')).status, 200)
    assert.equal(timers(), before)
  })

  it('lets in a reply that came in time while the process stalled past the deadline', async () => {
    // A store whose reply comes from another process: it is in the pipe when this process wakes from a
    // stall (a long GC pause, a starved CPU), and timers run before it is read.
    const replied = join(dir, 'replied')
    const handler = createPetstore({
      store: storeAnswering(
        () =>
          new Promise((resolve) => {
            const started = performance.now()
            const child = spawn('sh', ['-c', `sleep 0.05; echo reply; touch '${replied}'`])
            child.stdout.once('data', () => resolve([]))
            // Nothing runs here until the reply is in the pipe and the 100 ms deadline has passed; from
            // setImmediate, so that the next turn's timers come before its reads.
            const stall = () => {
              const waited = () => performance.now() - started
              while ((!existsSync(replied) || waited() < 200) && waited() < 10_000) {}
            }
            setTimeout(() => setImmediate(stall), 10)
          }),
      ),
      keys: [KEY],
      requestTimeout: 100,
    })
    assert.equal((await call(handler, '/v1/pets')).status, 200)
  })

  it('also bounds a keys function that hangs', async () => {
    const handler = createPetstore({
      store: memoryStore(),
      keys: () => new Promise<boolean>(() => {}),
      requestTimeout: 30,
      onError: () => {},
    })
    assertError(await call(handler, '/v1/pets'), 503, 'unavailable')
  })

  it('waits without limit when 0 or Infinity', async () => {
    for (const requestTimeout of [0, Number.POSITIVE_INFINITY]) {
      const handler = createPetstore({ store: storeAnswering(() => later(60, [])), keys: [KEY], requestTimeout })
      assert.equal((await call(handler, '/v1/pets')).status, 200)
    }
  })

  it('throws at construction for a value that is no duration', () => {
    for (const requestTimeout of [-1, Number.NaN, '5' as never, 2 ** 31]) {
      assert.throws(() => createPetstore({ store: memoryStore(), keys: [KEY], requestTimeout }), /requestTimeout/)
    }
  })
})

describe("the client's abort", () => {
  it('stops waiting on the store at once: 400 aborted, and onError is not told', async () => {
    const reported: unknown[] = []
    const store = storeAnswering(() => new Promise(() => {}))
    const handler = createPetstore({ store, keys: [KEY], onError: (error) => reported.push(error) })
    const controller = new AbortController()
    const pending = handler(new Request('http://x/v1/pets', { headers: AUTH, signal: controller.signal }))
    await later(20)
    assert.equal(store.calls, 1)
    controller.abort()
    const answer = await pending
    assert.equal(answer.status, 400)
    assert.equal((await answer.json()).code, 'aborted')
    assert.deepEqual(reported, [])
  })

  it('never calls the store for a request already aborted', async () => {
    const store = storeAnswering(() => [])
    const handler = createPetstore({ store, keys: [KEY] })
    const request = new Request('http://x/v1/pets', { headers: AUTH, signal: AbortSignal.abort() })
    assert.equal((await handler(request)).status, 400)
    assert.equal(store.calls, 0)
  })
})

describe('failures around the handler', () => {
  it('answers with the usual headers when a CORS origin function throws', async () => {
    const reported: unknown[] = []
    const handler = createPetstore({
      store: memoryStore(),
      keys: [KEY],
      cors: {
        origin: () => {
          throw new Error('origin check broke')
        },
      },
      onError: (error) => reported.push(error),
    })
    const answer = await call(handler, '/v1/pets', { headers: { origin: 'https://app.example' } })
    assertError(answer, 500, 'internal_error')
    assert.equal(answer.headers.get('cache-control'), 'no-store')
    assert.equal(reported.length, 1)
  })

  it('survives an async onError that rejects', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const handler = createPetstore({
        store: storeAnswering(() => Promise.reject(new Error('boom'))),
        keys: [KEY],
        onError: async () => {
          throw new Error('async logger broke')
        },
      })
      assertError(await call(handler, '/v1/pets'), 500, 'internal_error')
      await later(10)
      assert.deepEqual(unhandled, [])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('gives onError the request without its body or Authorization', async () => {
    const seen: Request[] = []
    const handler = createPetstore({
      store: storeAnswering(() => Promise.reject(new Error('boom'))),
      keys: [KEY],
      onError: (_, request) => seen.push(request),
    })
    await call(handler, '/v1/pets?limit=3', { headers: { 'x-request-id': 'r1' } })
    assert.equal(seen[0]?.url, 'http://petstore.test/v1/pets?limit=3')
    assert.equal(seen[0]?.method, 'GET')
    assert.equal(seen[0]?.headers.get('x-request-id'), 'r1')
    assert.equal(seen[0]?.headers.get('authorization'), null)
  })
})

describe('the default onError', () => {
  it('writes one line per failure on stderr, the causes after the error, no stack', async (t) => {
    const written = t.mock.method(console, 'error', () => {})
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect')
    const store = memoryStore()
    const handler = createPetstore({
      store: {
        ...store,
        list: store.list.bind(store),
        create: store.create.bind(store),
        get: () => Promise.reject(PetstoreError.unavailable(cause)),
      },
      keys: [KEY],
    })
    assert.equal((await call(handler, '/v1/pets/1')).status, 503)
    assert.equal(written.mock.callCount(), 1)
    assert.deepEqual(written.mock.calls[0]?.arguments, [
      'petstore: GET /v1/pets/1 failed: PetstoreError: The pet store is temporarily unavailable; try again later (cause: Error: connect ECONNREFUSED 127.0.0.1:5432 at TCPConnectWrap.afterConnect)',
    ])
  })
})
