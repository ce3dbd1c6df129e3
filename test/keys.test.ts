/**
 * Keys: given by their SHA-256 digest, read from a keys file by the binary,
 * and never written anywhere (answers, logs, onError) by the handler.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { inspect } from 'node:util'
import { parseCli, UsageError } from '../bin/options.js'
import { createPetstore, type FetchHandler, memoryStore, type PetStore, PetstoreError } from '../src/index.js'
import { assertError, call } from './helpers/client.js'
import { killAll, runToExit, startServer } from './helpers/spawn-server.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

const dir = mkdtempSync(join(tmpdir(), 'petstore-keys-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

describe('keys given as sha256: digests', () => {
  const clear = 'clear-key-31415'
  const hidden = 'hidden-key-27182'
  const handler = createPetstore({ store: memoryStore(), keys: [clear, `sha256:${sha256(hidden)}`] })
  const status = async (authorization: string) =>
    (await call(handler, '/v1/pets', { headers: { authorization } })).status

  it('accepts the key whose digest is configured, beside keys in clear', async () => {
    assert.equal(await status(`Bearer ${hidden}`), 200)
    assert.equal(await status(`Bearer ${clear}`), 200)
  })

  it('refuses the digest itself as a token, and near misses', async () => {
    assert.equal(await status(`Bearer sha256:${sha256(hidden)}`), 401)
    assert.equal(await status(`Bearer ${sha256(hidden)}`), 401)
    assert.equal(await status(`Bearer ${hidden}x`), 401)
    assert.equal(await status(`Bearer ${hidden.toUpperCase()}`), 401)
  })

  it('takes the hex digits and the prefix in any case', async () => {
    const upper = createPetstore({ store: memoryStore(), keys: [`SHA256:${sha256(hidden).toUpperCase()}`] })
    assert.equal((await call(upper, '/v1/pets', { headers: { authorization: `Bearer ${hidden}` } })).status, 200)
  })

  it('takes a key holding a comma (one Authorization field), refuses one a client cannot send', async () => {
    const handler = createPetstore({ store: memoryStore(), keys: ['k,2'] })
    assert.equal((await call(handler, '/v1/pets', { headers: { authorization: 'Bearer k,2' } })).status, 200)
    assert.throws(
      () => createPetstore({ store: memoryStore(), keys: ['k,'] }),
      /keys\[0\]: a key must not end with ","/,
    )
    for (const key of ['kéy', 'k\u0000y', '🔑']) {
      assert.throws(
        () => createPetstore({ store: memoryStore(), keys: [key] }),
        /keys\[0\]: a key must be printable ASCII/,
      )
    }
  })

  it('throws at construction for a malformed sha256: entry, without quoting it', () => {
    for (const entry of [
      'sha256:',
      `sha256:${'a'.repeat(63)}`,
      `sha256:${'a'.repeat(65)}`,
      `sha256:${'g'.repeat(64)}`,
    ]) {
      assert.throws(
        () => createPetstore({ store: memoryStore(), keys: ['fine', entry] }),
        (error: Error) =>
          error instanceof TypeError &&
          /keys\[1\]: .*64 hex digits/.test(error.message) &&
          !error.message.includes(entry.slice('sha256:'.length) || '\0'),
      )
    }
  })
})

describe('no key in answers, logs or onError', () => {
  const clear = 'never-logged-key-8c1f'
  const hidden = 'never-logged-digest-key-4b7e'
  const wrong = 'never-logged-wrong-token-9d2a'
  const basic = `Basic ${btoa('user:never-logged-password-5e3c')}`
  const secrets = [clear, hidden, wrong, basic, 'never-logged-password-5e3c', btoa('user:never-logged-password-5e3c')]
  const authorizations = [
    `Bearer ${clear}`,
    `bearer ${hidden}`,
    `Bearer ${wrong}`,
    basic,
    `Bearer ${clear} trailing`,
    `Bearer ${wrong}, Bearer ${clear}`,
  ]

  /** Stores that fail every way there is, and one that works. */
  const stores: Record<string, () => PetStore> = {
    working: () => memoryStore(),
    throwing: () => broken(() => Promise.reject(new Error('db exploded'))),
    unavailable: () => broken(() => Promise.reject(PetstoreError.unavailable(new Error('ECONNREFUSED')))),
    hanging: () => broken(() => new Promise(() => {})),
    malformed: () => broken(() => Promise.resolve([{ id: 'one', name: 7 }]) as Promise<never>),
  }
  function broken(fail: () => Promise<never>): PetStore {
    return { create: fail, get: fail, list: fail }
  }

  /**
   * Everything written to the console or to stderr while `work` runs. Not
   * stdout itself: node:test reports through it (console.log is captured).
   */
  async function captureOutput(work: () => Promise<void>): Promise<string> {
    const written: string[] = []
    const originals = { ...console }
    const stderr = process.stderr.write
    for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
      console[name] = (...args: unknown[]) => void written.push(inspect(args, { depth: Number.POSITIVE_INFINITY }))
    }
    const capture = (chunk: unknown) => {
      written.push(String(chunk))
      return true
    }
    process.stderr.write = capture as typeof process.stderr.write
    try {
      await work()
    } finally {
      Object.assign(console, originals)
      process.stderr.write = stderr
    }
    return written.join('\n')
  }

  async function exercise(handler: FetchHandler, seen: string[]): Promise<void> {
    for (const authorization of authorizations) {
      for (const [path, init] of [
        ['/v1/pets', {}],
        ['/v1/pets/1', {}],
        ['/v1/pets', { json: { name: 'Rex', categoryId: 1 } }],
        ['/v1/nothing', { method: 'DELETE' }],
      ] as const) {
        const answer = await call(handler, path, { ...init, headers: { authorization } })
        seen.push(answer.text, JSON.stringify([...answer.headers]))
      }
    }
  }

  for (const [label, makeStore] of Object.entries(stores)) {
    it(`holds with a ${label} store, through the default onError and a custom one`, async () => {
      const seen: string[] = []
      const keys = [clear, `sha256:${sha256(hidden)}`]
      const output = await captureOutput(async () => {
        const logged = createPetstore({ store: makeStore(), keys, requestTimeout: 20 })
        await exercise(logged, seen)
        const custom = createPetstore({
          store: makeStore(),
          keys,
          requestTimeout: 20,
          onError: (error, request) => {
            seen.push(
              inspect([error, request, [...request.headers]], { depth: Number.POSITIVE_INFINITY, showHidden: true }),
            )
          },
        })
        await exercise(custom, seen)
      })
      if (label !== 'working') assert.ok(output.includes('petstore:'), 'the default onError did log')
      for (const secret of secrets) {
        assert.ok(!output.includes(secret), `${label}: a secret was logged`)
        assert.ok(!seen.some((text) => text.includes(secret)), `${label}: a secret was answered or told to onError`)
      }
    })
  }

  it('holds when a key function fails, and when onError itself fails', async () => {
    const seen: string[] = []
    const output = await captureOutput(async () => {
      const throwing = createPetstore({
        store: memoryStore(),
        keys: () => {
          throw new Error('key service down')
        },
        onError: (error, request) => {
          seen.push(inspect([error, request], { depth: Number.POSITIVE_INFINITY }))
          throw new Error('the logger broke')
        },
      })
      await exercise(throwing, seen)
      const logged = createPetstore({ store: memoryStore(), keys: () => Promise.reject(new Error('key service down')) })
      await exercise(logged, seen)
    })
    for (const secret of secrets) {
      assert.ok(!output.includes(secret), 'a secret was logged')
      assert.ok(!seen.some((text) => text.includes(secret)), 'a secret was answered or told to onError')
    }
    assertError(
      await call(createPetstore({ store: memoryStore(), keys: () => 'yes' as never }), '/v1/pets'),
      401,
      'unauthorized',
    )
  })
})

describe('--keys-file', () => {
  const file = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }
  const digest = `sha256:${sha256('from-file-2')}`
  const good = file('keys', `# keys of the petstore\n\nfrom-file-1\r\n  ${digest}  \n# from-file-3\n`)

  it('reads one key or digest per line, skipping blank lines and # comments', () => {
    assert.deepEqual(parseCli(['--keys-file', good], {}).keys, ['from-file-1', digest])
    assert.deepEqual(parseCli([], { PETSTORE_KEYS_FILE: good }).keys, ['from-file-1', digest])
    assert.deepEqual(parseCli(['--keys-file', file('bom', '\ufeffbom-key\n')], {}).keys, ['bom-key'])
  })

  it('adds to --key, and flags win over both environment variables', () => {
    assert.deepEqual(parseCli(['--key', 'flag', '--keys-file', good], { PETSTORE_API_KEYS: 'env' }).keys, [
      'flag',
      'from-file-1',
      digest,
    ])
    assert.deepEqual(parseCli(['--key', 'flag'], { PETSTORE_KEYS_FILE: good }).keys, ['flag'])
    assert.deepEqual(parseCli([], { PETSTORE_API_KEYS: 'env', PETSTORE_KEYS_FILE: good }).keys, [
      'env',
      'from-file-1',
      digest,
    ])
  })

  it('refuses a missing, empty or malformed file, naming the line but never its content', () => {
    const refuses = (argv: string[], pattern: RegExp, secret?: string) =>
      assert.throws(
        () => parseCli(argv, {}),
        (error: Error) =>
          error instanceof UsageError && pattern.test(error.message) && !error.message.includes(secret ?? '\0'),
      )
    refuses(['--keys-file', join(dir, 'missing')], /cannot read --keys-file .*missing: no such file \(ENOENT\)/)
    refuses(['--keys-file', dir], /cannot read --keys-file .*: is a directory \(EISDIR\)/)
    refuses(['--keys-file', ''], /--keys-file must not be empty/)
    refuses(['--keys-file', file('empty', '\n# nothing\n\n')], /holds no key/)
    refuses(['--keys-file', file('spaces', 'ok\nsecret with spaces\n')], /line 2: .*whitespace/, 'secret with spaces')
    refuses(['--keys-file', file('bad-digest', 'sha256:abcdef\n')], /line 1: .*64 hex digits/, 'abcdef')
    refuses(['--key', 'sha256:123'], /64 hex digits/)
  })

  it('serves with the keys of the file, which the process listing never shows', async () => {
    const server = await startServer(['--port', '0', '--db', 'memory', '--keys-file', good])
    try {
      const get = (key: string) => fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${key}` } })
      assert.equal((await get('from-file-1')).status, 200)
      assert.equal((await get('from-file-2')).status, 200)
      assert.equal((await get('from-file-3')).status, 401)
      assert.doesNotMatch(server.stderr(), /accepts:/, 'no generated key')
      assert.ok(!server.stderr().includes('from-file'), 'keys are not printed')
    } finally {
      await server.stop()
    }
  })

  it('exits 1 with one line on stderr for a file it cannot use', async () => {
    for (const path of [join(dir, 'missing'), file('empty-too', '')]) {
      const { code, stderr } = await runToExit(['--db', 'memory', '--keys-file', path])
      assert.equal(code, 1)
      assert.equal(stderr.trim().split('\n').length, 1, stderr)
      assert.match(stderr, /^petstore-server: .*--keys-file/)
    }
  })
})
