/**
 * End-to-end tests of the `petstore-server` binary: real processes, real
 * HTTP on 127.0.0.1, signals, and the command line.
 *
 * Run: node --import tsx --test test/cli.test.ts
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseCli, UsageError } from '../bin/options.js'
import { killAll, type RunningServer, repoRoot, runToExit, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'k'
const auth = (key: string) => ({ authorization: `Bearer ${key}` })
const jsonHeaders = (key: string) => ({ ...auth(key), 'content-type': 'application/json' })

const tempDirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'))
  tempDirs.push(dir)
  return dir
}

after(async () => {
  await killAll()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
})

/** A port that was free a moment ago: listen on 0, read it, close. */
async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * Starts a binary on a port that was free a moment ago, and on another if a test running
 * beside this one took that port in between (the binary then exits EADDRINUSE).
 */
async function startOnFreePort(start: (port: number) => Promise<RunningServer>) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      return { server: await start(port), port }
    } catch (error) {
      if (attempt >= 5 || !String(error).includes('EADDRINUSE')) throw error
    }
  }
}

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/**
 * One request over `node:http`, with the path sent exactly as given (no URL
 * normalization) and a fresh connection. An error after the response has
 * arrived (the server may stop reading an oversized upload) is ignored.
 */
function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string | number>; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let answered = false
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        agent: false,
      },
      (response) => {
        answered = true
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          body += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
        response.on('error', reject)
      },
    )
    request.on('error', (error) => {
      if (!answered) reject(error)
    })
    request.end(options.body)
  })
}

/** Resolves with the error code of a TCP connection attempt (undefined if it connected). */
function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(undefined)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code))
  })
}

async function createPet(base: string, key: string, pet: Record<string, unknown>) {
  const res = await fetch(`${base}/pets`, { method: 'POST', headers: jsonHeaders(key), body: JSON.stringify(pet) })
  assert.equal(res.status, 201, await res.clone().text())
  return (await res.json()) as { id: number; name: string; categoryId: number; status?: string }
}

describe('petstore-server binary', { concurrency: 4, timeout: 60_000 }, () => {
  test('--port 0 --key k --db memory: ready line, list/create/get, 401 without key, /healthz', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      assert.equal(server.host, '127.0.0.1')
      assert.ok(server.port > 0 && server.port < 65536, `real port, got ${server.port}`)
      assert.equal(server.url, `http://127.0.0.1:${server.port}/v1`)
      assert.equal(server.stdout().trim().split('\n').length, 1, 'one ready line on stdout')
      const base = server.url

      let res = await fetch(`${base}/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), [])

      const created = await createPet(base, KEY, { name: 'Rex', categoryId: 3, status: 'available' })
      assert.ok(Number.isInteger(created.id) && created.id > 0)
      assert.deepEqual(created, { id: created.id, name: 'Rex', categoryId: 3, status: 'available' })

      res = await fetch(`${base}/pets/${created.id}`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), created)

      res = await fetch(`${base}/pets`, { headers: auth(KEY) })
      assert.deepEqual(await res.json(), [created])

      res = await fetch(`${base}/pets`)
      assert.equal(res.status, 401)
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="petstore"/)
      assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json')
      const error = (await res.json()) as { code: string; status: number }
      assert.equal(error.code, 'unauthorized')
      assert.equal(error.status, 401)

      res = await fetch(`${base}/pets`, { headers: auth('wrong') })
      assert.equal(res.status, 401)
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/)
      await res.body?.cancel()

      // Health check: outside the base path, no key, GET and HEAD.
      res = await fetch(`${server.origin}/healthz`)
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), { status: 'ok' })
      res = await fetch(`${server.origin}/healthz`, { method: 'HEAD' })
      assert.equal(res.status, 200)
      assert.equal(await res.text(), '')
      assert.equal(res.headers.get('content-length'), '15')
      // A query does not change the path; a longer path is another (the API's 404).
      res = await fetch(`${server.origin}/healthz?probe=1`)
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), { status: 'ok' })
      res = await fetch(`${server.origin}/healthzz`)
      assert.equal(res.status, 404)
      await res.body?.cancel()
      // Another method: the 405 the API gives, in the same words.
      res = await fetch(`${server.origin}/healthz`, { method: 'DELETE' })
      assert.equal(res.status, 405)
      assert.equal(res.headers.get('allow'), 'GET, HEAD')
      assert.equal((await res.json()).message, 'Method not allowed; use GET, HEAD')

      assert.deepEqual(await server.stop(), { code: 0, signal: null })
    } finally {
      await server.stop('SIGKILL')
    }
  })

  test('--db sqlite:FILE that this user cannot write: one line, exit 1 (it served reads and 503 to every create)', {
    skip: process.getuid?.() !== 0 && 'runs the binary as another user: needs root',
  }, async (t) => {
    const dir = tempDir()
    chmodSync(dir, 0o755)
    const file = join(dir, 'theirs.db')
    // A database made (migrated) by root: another user can open it, but only to read.
    const made = await startServer(['--port', '0', '--key', KEY, '--db', `sqlite:${file}`])
    assert.deepEqual(await made.stop('SIGTERM'), { code: 0, signal: null })
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'bin/petstore-server.ts', '--port', '0', '--key', KEY, '--db', `sqlite:${file}`],
      {
        cwd: repoRoot,
        uid: 65534,
        gid: 65534,
        encoding: 'utf8',
        timeout: 30_000,
      },
    )
    // A Node from npx's cache lives under root's home, which the other user cannot enter (CI's Node 22 and 24).
    if (run.error !== undefined || run.status === null) {
      return t.skip(`cannot run ${process.execPath} as uid 65534: ${run.error?.message ?? run.signal}`)
    }
    assert.equal(run.status, 1, run.stderr)
    assert.equal(run.stdout, '')
    assert.equal(
      run.stderr,
      `petstore-server: --db sqlite:${file}: ${file} cannot be written: permission denied (EACCES) (see --help)\n`,
    )
  })

  test('--db sqlite:FILE keeps pets across a SIGTERM and a restart', async () => {
    const file = join(tempDir(), 'x.db')
    const args = ['--port', '0', '--key', KEY, '--db', `sqlite:${file}`]

    const first = await startServer(args)
    let pets: Awaited<ReturnType<typeof createPet>>[]
    try {
      pets = [
        await createPet(first.url, KEY, { name: 'Rex', categoryId: 1, status: 'available' }),
        await createPet(first.url, KEY, { name: 'Mia 🐈 «ü»', categoryId: 9007199254740991, status: 'sold' }),
        await createPet(first.url, KEY, { name: 'No status', categoryId: -4 }),
      ]
      assert.ok(!('status' in (pets[2] as object)), 'a pet created without status has no status key')
      assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null })
    } finally {
      await first.stop('SIGKILL')
    }

    const second = await startServer(args)
    try {
      for (const pet of pets) {
        const res = await fetch(`${second.url}/pets/${pet.id}`, { headers: auth(KEY) })
        assert.equal(res.status, 200)
        assert.deepEqual(await res.json(), pet)
      }
      const res = await fetch(`${second.url}/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), pets)

      const next = await createPet(second.url, KEY, { name: 'After restart', categoryId: 2 })
      assert.ok(
        next.id > Math.max(...pets.map((pet) => pet.id)),
        `new id ${next.id} continues after ${pets.map((p) => p.id)}`,
      )
      assert.deepEqual(await second.stop('SIGINT'), { code: 0, signal: null })
    } finally {
      await second.stop('SIGKILL')
    }
  })

  test('without a key, a generated one is printed once on stderr and works', async () => {
    const server = await startServer(['--port', '0', '--db', 'memory'])
    try {
      const match = /accepts: (\S+)/.exec(server.stderr())
      assert.ok(match, `generated key on stderr: ${server.stderr()}`)
      const key = match[1] as string
      assert.ok(key.length >= 16, 'the generated key is long enough')
      assert.ok(!server.stdout().includes(key), 'the key is not on stdout')

      let res = await fetch(`${server.url}/pets`, { headers: auth(key) })
      assert.equal(res.status, 200)
      await res.body?.cancel()
      res = await fetch(`${server.url}/pets`)
      assert.equal(res.status, 401)
      await res.body?.cancel()
      await createPet(server.url, key, { name: 'Once', categoryId: 1 })

      assert.equal(server.stderr().split(key).length - 1, 1, 'printed exactly once')
    } finally {
      await server.stop()
    }
  })

  test('PETSTORE_API_KEYS=a,b accepts both keys; --key wins over it', async () => {
    const [fromEnv, flagged] = await Promise.all([
      startServer(['--port', '0', '--db', 'memory'], { PETSTORE_API_KEYS: 'a,b' }),
      startServer(['--port', '0', '--db', 'memory', '--key', 'flagkey'], { PETSTORE_API_KEYS: 'envkey' }),
    ])
    try {
      assert.doesNotMatch(fromEnv.stderr(), /accepts:/, 'no generated key when env has keys')
      for (const key of ['a', 'b']) {
        const res = await fetch(`${fromEnv.url}/pets`, { headers: auth(key) })
        assert.equal(res.status, 200, `key ${key}`)
        await res.body?.cancel()
      }
      let res = await fetch(`${fromEnv.url}/pets`, { headers: auth('a,b') })
      assert.equal(res.status, 401)
      await res.body?.cancel()

      res = await fetch(`${flagged.url}/pets`, { headers: auth('flagkey') })
      assert.equal(res.status, 200)
      await res.body?.cancel()
      res = await fetch(`${flagged.url}/pets`, { headers: auth('envkey') })
      assert.equal(res.status, 401)
      await res.body?.cancel()
    } finally {
      await Promise.all([fromEnv.stop(), flagged.stop()])
    }
  })

  test('PORT is honoured without --port; --port wins over PORT', async () => {
    // The PORT that --port overrides is held here: a binary that listened on it would exit EADDRINUSE.
    const held = net.createServer()
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve))
    const ignoredPort = (held.address() as net.AddressInfo).port
    const [fromEnv, flagged] = await Promise.all([
      startOnFreePort((port) => startServer(['--key', KEY, '--db', 'memory'], { PORT: String(port) })),
      startOnFreePort((port) =>
        startServer(['--key', KEY, '--db', 'memory', '--port', String(port)], { PORT: String(ignoredPort) }),
      ),
    ])
    try {
      assert.equal(fromEnv.server.url, `http://127.0.0.1:${fromEnv.port}/v1`)
      let res = await fetch(`http://127.0.0.1:${fromEnv.port}/healthz`)
      assert.equal(res.status, 200)
      await res.body?.cancel()

      assert.equal(flagged.server.url, `http://127.0.0.1:${flagged.port}/v1`)
      res = await fetch(`http://127.0.0.1:${flagged.port}/v1/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      await res.body?.cancel()
    } finally {
      await Promise.all([fromEnv.server.stop(), flagged.server.stop()])
      held.close()
    }
  })

  test('--base-path /api/v1 moves the API', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory', '--base-path', '/api/v1'])
    try {
      assert.match(server.url, /\/api\/v1$/)
      assert.equal(server.url, `${server.origin}/api/v1`)
      const pet = await createPet(server.url, KEY, { name: 'Based', categoryId: 1 })
      let res = await fetch(`${server.origin}/api/v1/pets/${pet.id}`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), pet)
      res = await fetch(`${server.origin}/api/v1/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), [pet])

      res = await fetch(`${server.origin}/v1/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 404)
      assert.equal(((await res.json()) as { status: number }).status, 404)
      res = await fetch(`${server.origin}/healthz`)
      assert.equal(res.status, 200, '/healthz stays at the root')
      await res.body?.cancel()
    } finally {
      await server.stop()
    }
  })

  test('--public-url (repeatable, with a description) lists the servers of openapi.json', async () => {
    const server = await startServer([
      ...['--port', '0', '--key', KEY, '--db', 'memory'],
      ...['--public-url', 'https://api.petstore.dev/v1/ Production API'],
      ...['--public-url', 'https://staging.petstore.dev/v1'],
    ])
    try {
      const res = await fetch(`${server.url}/openapi.json`)
      assert.equal(res.status, 200)
      assert.deepEqual(((await res.json()) as { servers: unknown }).servers, [
        { url: 'https://api.petstore.dev/v1', description: 'Production API' },
        { url: 'https://staging.petstore.dev/v1' },
      ])
    } finally {
      await server.stop()
    }
  })

  test('--cors https://app.example: preflight without a key, headers on responses', async () => {
    const origin = 'https://app.example'
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory', '--cors', origin])
    try {
      let res = await fetch(`${server.url}/pets`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      })
      assert.equal(res.status, 204)
      assert.equal(res.headers.get('access-control-allow-origin'), origin)
      assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/)
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /authorization/i)
      await res.body?.cancel()

      res = await fetch(`${server.url}/pets`, {
        method: 'POST',
        headers: { ...jsonHeaders(KEY), origin },
        body: JSON.stringify({ name: 'Cors', categoryId: 1 }),
      })
      assert.equal(res.status, 201)
      assert.equal(res.headers.get('access-control-allow-origin'), origin)
      const exposed = (res.headers.get('access-control-expose-headers') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
      assert.ok(exposed.includes('link') && exposed.includes('location'), `exposed: ${exposed}`)
      await res.body?.cancel()

      // Errors carry the headers too.
      res = await fetch(`${server.url}/pets`, { headers: { origin } })
      assert.equal(res.status, 401)
      assert.equal(res.headers.get('access-control-allow-origin'), origin)
      await res.body?.cancel()

      // Another origin is not allowed.
      res = await fetch(`${server.url}/pets`, { headers: { ...auth(KEY), origin: 'https://evil.example' } })
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('access-control-allow-origin'), null)
      await res.body?.cancel()
    } finally {
      await server.stop()
    }
  })

  test('--help and --version', async () => {
    const [help, shortHelp, version] = await Promise.all([
      runToExit(['--help']),
      runToExit(['-h']),
      runToExit(['--version']),
    ])
    for (const run of [help, shortHelp]) {
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /--port/)
      assert.match(run.stdout, /--db/)
      assert.equal(run.stderr, '')
    }
    const { version: expected } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string
    }
    assert.equal(version.code, 0, version.stderr)
    assert.equal(version.stdout.trim(), expected)
    assert.equal(version.stderr, '')
  })

  test('bad flags: exit 1, one line on stderr, nothing on stdout', async () => {
    const dir = tempDir()
    const cases = [
      ['--nope'],
      ['--port', 'abc'],
      ['--port', '70000'],
      ['--port', '-1'],
      ['--db', 'nonsense'],
      ['--db', 'sqlite:/nonexistent-dir/x/y.db'],
      ['--db', `sqlite:${dir}`],
      ['--base-path', 'v1'],
      ['--public-url', 'api.petstore.dev/v1 Production'],
      // Empty values: each was once taken for "not given", silently.
      ['--key', ''],
      ['--host', ''],
      ['--metrics-port', '0', '--metrics-host', ''],
      ['--cursor-secret', ''],
      ['--cors', 'https://app.example/'],
      ['--cors', 'not an origin'],
      ['--keys-file', dir],
    ]
    // The server would start and wait if a flag were accepted: give each an unused key and memory db
    // only where --db is not under test, so that an accepted flag shows as a timeout, not a success.
    const runs = await Promise.all(
      cases.map((args) =>
        runToExit(args.includes('--db') ? ['--port', '0', ...args] : ['--port', '0', '--db', 'memory', ...args]),
      ),
    )
    runs.forEach((run, i) => {
      const label = (cases[i] as string[]).join(' ')
      assert.equal(run.code, 1, `${label}: exit code (stderr ${JSON.stringify(run.stderr)})`)
      assert.equal(run.stdout, '', `${label}: stdout`)
      const lines = run.stderr.trim().split('\n')
      assert.equal(lines.length, 1, `${label}: one line on stderr, got ${JSON.stringify(run.stderr)}`)
      assert.ok((lines[0] as string).trim().length > 0, `${label}: non-empty stderr`)
    })
  })

  test('bad values are named as given, and say what is wrong', async () => {
    const dir = tempDir()
    const cases: { args: string[]; env?: Record<string, string>; says: RegExp; never?: string }[] = [
      { args: ['--port', '-1'], says: /--port needs a value; write one that starts with "-" as --port=VALUE/ },
      { args: ['--key', ''], says: /--key must not be empty/ },
      { args: ['--host', ' '], says: /--host must not be empty/ },
      { args: ['--keys-file', ''], says: /^petstore-server: --keys-file must not be empty/ },
      { args: ['--cors', 'null'], says: /must not be "null", the origin of sandboxed frames/ },
      // The document is served without a key: a password in a server URL would be published.
      {
        args: ['--public-url', 'https://u:secret@api.example/v1'],
        says: /^petstore-server: --public-url must be a URL without a user or password, .*got "https:\/\/\*\*\*@api/,
        never: 'secret',
      },
      { args: ['--public-url', '/v1?x=1 Here'], says: /^petstore-server: --public-url must be a path without \? or #/ },
      {
        args: ['--public-url', 'ftp://x/v1'],
        says: /^petstore-server: --public-url must be an http\(s\) URL or a path/,
      },
      {
        args: ['--base-path', '//v1'],
        says: /^petstore-server: --base-path must be a path of plain segments.*got "\/\/v1"/,
      },
      { args: ['--cors', 'https://app.example/'], says: /did you mean https:\/\/app\.example\?/ },
      { args: ['--db', `sqlite:${dir}`], says: /is a directory/ },
      { args: ['--db', 'sqlite:/nonexistent-dir/x.db'], says: /directory \/nonexistent-dir does not exist/ },
      { args: ['--keys-file', join(dir, 'missing')], says: /no such file \(ENOENT\)/ },
      { args: [], env: { DATABASE_URL: 'foo://x' }, says: /^petstore-server: DATABASE_URL must be memory/ },
      { args: [], env: { PETSTORE_API_KEYS: ',,' }, says: /PETSTORE_API_KEYS holds no key/ },
      // 1.5 once printed a stats line every millisecond; abc, -1 and 0 were ignored without a word.
      {
        args: ['--key', KEY],
        env: { PETSTORE_STATS_INTERVAL_MS: '1.5' },
        says: /PETSTORE_STATS_INTERVAL_MS must be a whole number/,
      },
      {
        args: ['--key', KEY],
        env: { PETSTORE_STATS_INTERVAL_MS: '0' },
        says: /PETSTORE_STATS_INTERVAL_MS must be at least 100/,
      },
      // A password never reaches the terminal, as the user part or as a parameter, even with a `/` in it.
      {
        args: ['--db', 'postgres://127.0.0.1:1/db?user=u&password=hunter2'],
        says: /password=\*\*\*: .*ECONNREFUSED.*is the database server running/,
        never: 'hunter2',
      },
      {
        args: ['--db', 'postgres://u:hun/ter2@127.0.0.1:1/db'],
        says: /postgres:\/\/\*\*\*@127\.0\.0\.1:1\/db/,
        never: 'ter2',
      },
    ]
    const runs = await Promise.all(
      // A case about the environment gets nothing more: a flag would win over the variable.
      cases.map(({ args, env }) => {
        const db = args.includes('--db') || env !== undefined ? [] : ['--db', 'memory']
        return runToExit(['--port', '0', ...db, ...(env === undefined ? ['--key', KEY] : []), ...args], env)
      }),
    )
    runs.forEach((run, i) => {
      const { args, env, says, never } = cases[i] as (typeof cases)[number]
      const label = `${JSON.stringify(env ?? {})} ${args.join(' ')}`
      assert.equal(run.code, 1, `${label}: exit code`)
      assert.equal(run.stderr.trim().split('\n').length, 1, `${label}: one line, got ${JSON.stringify(run.stderr)}`)
      assert.match(run.stderr, says, label)
      if (never !== undefined) assert.ok(!run.stderr.includes(never), `${label}: printed ${never}`)
    })
  })

  test('--help and --version answer whatever the environment holds', async () => {
    const [help, version] = await Promise.all([
      runToExit(['--help'], { PORT: 'abc', PETSTORE_KEYS_FILE: '/nonexistent' }),
      runToExit(['--version', '--port', 'abc'], { DATABASE_URL: 'foo://x' }),
    ])
    assert.equal(help.code, 0, help.stderr)
    assert.match(help.stdout, /^Usage: petstore-server/)
    assert.equal(version.code, 0, version.stderr)
    assert.match(version.stdout, /^\d+\.\d+\.\d+/)
  })

  test('--help and --version answer whatever else the command line holds, a mistake included', () => {
    for (const argv of [
      ['--help', '--bogus'],
      ['--help', 'extra'],
      ['--port', '--help'],
      ['-h', '--port'],
    ]) {
      assert.equal(parseCli(argv, {}).help, true, argv.join(' '))
    }
    assert.equal(parseCli(['--version', '--port'], {}).version, true)
    assert.throws(() => parseCli(['--bogus'], {}), UsageError)
    // After `--`, a --help is an argument like any other.
    assert.throws(() => parseCli(['--', '--help'], {}), UsageError)
  })

  test('a flag of one value given twice is refused, naming it; repeatable ones add up', () => {
    for (const argv of [
      ['--port', '80', '--port', '8080'],
      ['--db', 'memory', '--db=sqlite:x.db'],
      ['--base-path', '/v1', '--key', KEY, '--base-path', '/v2'],
    ]) {
      const flag = argv[0] as string
      assert.throws(() => parseCli(argv, {}), new UsageError(`${flag} is given twice; give it once`), argv.join(' '))
    }
    const twice = parseCli(['--key', 'a', '--key', 'b', '--cors', '*', '--cors', '*', '--no-docs', '--no-docs'], {})
    assert.deepEqual(twice.keys, ['a', 'b'])
    assert.equal(twice.docs, false)
    // Help still answers.
    assert.equal(parseCli(['--port', '1', '--port', '2', '--help'], {}).help, true)
  })

  test('graceful shutdown: a request in flight completes, new connections are refused, exit 0', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      const body = Buffer.from(JSON.stringify({ name: 'Slowpoke', categoryId: 7, status: 'pending' }))
      const request = http.request({
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/v1/pets',
        // The server's 100 Continue says the API is reading the body: a sleep said it only on a quiet machine.
        headers: { ...jsonHeaders(KEY), 'content-length': body.length, expect: '100-continue' },
      })
      const reading = once(request, 'continue')
      const responded = new Promise<RawResponse>((resolve, reject) => {
        request.on('response', (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => {
            text += chunk
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }))
        })
        request.on('error', reject)
      })
      responded.catch(() => {}) // awaited below; do not let an early failure go unhandled meanwhile

      request.flushHeaders()
      await reading
      request.write(body.subarray(0, 5))
      const stopped = server.stop('SIGTERM')
      await until(() => server.stderr().includes('SIGTERM'), 'SIGTERM on stderr', 5_000)
      assert.equal(await connectError(server.port), 'ECONNREFUSED', 'a new connection after SIGTERM is refused')
      request.write(body.subarray(5, 20))
      await sleep(200)
      request.end(body.subarray(20))

      const response = await responded
      assert.equal(response.status, 201, response.body)
      const pet = JSON.parse(response.body) as { id: number }
      assert.deepEqual(pet, { id: pet.id, name: 'Slowpoke', categoryId: 7, status: 'pending' })
      assert.deepEqual(await stopped, { code: 0, signal: null })
    } finally {
      await server.stop('SIGKILL')
    }
  })

  test('SIGHUP without a keys file (a closed terminal) stops the server as SIGTERM does, with --workers too', async () => {
    const dir = tempDir()
    for (const extra of [
      ['--db', 'memory'],
      ['--db', `sqlite:${join(dir, 'hup.db')}`, '--workers', '2'],
    ]) {
      const server = await startServer(['--port', '0', '--key', KEY, ...extra])
      try {
        assert.deepEqual(
          await server.stop('SIGHUP'),
          { code: 0, signal: null },
          `${extra.join(' ')}: ${server.stdout()} ${server.stderr()}`,
        )
        assert.match(server.stderr(), /SIGHUP/)
      } finally {
        await server.stop('SIGKILL')
      }
    }
  })

  test('an oversized upload gets its 413 through fetch, sized or chunked, without a connection reset', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    try {
      // 200 KB is drained and the connection kept; 20 MB is past the drain cap and cut off after the answer.
      for (const size of [200 * 1024, 20 * 1024 * 1024]) {
        for (const chunked of [false, true]) {
          for (let round = 0; round < 3; round++) {
            const bytes = Buffer.alloc(size, 'a')
            const res = await fetch(`${server.url}/pets`, {
              method: 'POST',
              headers: jsonHeaders(KEY),
              body: chunked ? new Blob([bytes]).stream() : bytes,
              duplex: 'half',
            } as RequestInit)
            assert.equal(res.status, 413, `${size} bytes, chunked: ${chunked}`)
            assert.equal(((await res.json()) as { code: string }).code, 'payload_too_large')
          }
        }
      }
      const res = await fetch(`${server.url}/pets`, { headers: auth(KEY) })
      assert.equal(res.status, 200, 'still serving')
      await res.body?.cancel()
    } finally {
      await server.stop()
    }
  })

  test('malformed requests are 4xx and do not kill the process', async () => {
    const server = await startServer(['--port', '0', '--key', KEY, '--db', 'memory'])
    const { port } = server
    const expectError = (res: RawResponse, status: number | number[], label: string) => {
      const allowed = Array.isArray(status) ? status : [status]
      assert.ok(allowed.includes(res.status), `${label}: status ${res.status}, expected ${allowed}: ${res.body}`)
      const error = JSON.parse(res.body) as { code: string; status: number; message: string }
      assert.equal(error.status, res.status, `${label}: Error.status`)
      assert.equal(typeof error.code, 'string')
      assert.equal(typeof error.message, 'string')
      return error
    }
    try {
      const post = (body: string | Buffer, headers: Record<string, string | number> = jsonHeaders(KEY)) =>
        rawRequest(port, { method: 'POST', path: '/v1/pets', headers, body })

      const [invalidJson, tooLarge, tooLargeChunked, plain, badEscape, hugeId, longQuery] = await Promise.all([
        post('{"name": "Rex", "categoryId": '),
        post(Buffer.alloc(200 * 1024, 'a')),
        post(JSON.stringify({ name: 'x'.repeat(200 * 1024), categoryId: 1 }), {
          ...jsonHeaders(KEY),
          'transfer-encoding': 'chunked',
        }),
        post(JSON.stringify({ name: 'Plain', categoryId: 1 }), { ...auth(KEY), 'content-type': 'text/plain' }),
        rawRequest(port, { path: '/v1/pets/%E0%A4%A', headers: auth(KEY) }),
        rawRequest(port, { path: '/v1/pets/99999999999999999999999', headers: auth(KEY) }),
        rawRequest(port, { path: `/v1/pets?limit=5&junk=${'q'.repeat(8 * 1024)}`, headers: auth(KEY) }),
      ])
      assert.equal(expectError(invalidJson, 400, 'invalid JSON').code, 'invalid_json')
      assert.equal(expectError(tooLarge, 413, '200 KB body').code, 'payload_too_large')
      assert.equal(expectError(tooLargeChunked, 413, '200 KB chunked body').code, 'payload_too_large')
      assert.equal(expectError(plain, 415, 'text/plain').code, 'unsupported_media_type')
      expectError(badEscape, [400, 404], '/v1/pets/%E0%A4%A')
      expectError(hugeId, [400, 404], '/v1/pets/99999999999999999999999')
      assert.equal(longQuery.status, 200, `8 KB query string: ${longQuery.body}`)
      assert.deepEqual(JSON.parse(longQuery.body), [])

      // Garbage on a raw TCP connection.
      const garbage = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'))
        let text = ''
        socket.setEncoding('utf8')
        socket.on('data', (chunk: string) => {
          text += chunk
        })
        socket.on('close', () => resolve(text))
        socket.on('error', reject)
      })
      assert.match(garbage, /^HTTP\/1\.1 4\d\d /, `raw garbage answer: ${JSON.stringify(garbage)}`)

      const res = await fetch(`${server.origin}/healthz`)
      assert.equal(res.status, 200)
      await res.body?.cancel()
      assert.equal(server.child.exitCode, null, 'still running')
      assert.doesNotMatch(server.stderr(), /failed:|internal_error/, 'no 5xx was logged')
    } finally {
      await server.stop()
    }
  })
})

// Apart from the suite above: four servers at once would eat into its one-minute budget.
describe('cursor secret', { timeout: 60_000 }, () => {
  test('two processes on one database accept each other’s cursors with one PETSTORE_CURSOR_SECRET / --cursor-secret, not without', async () => {
    const db = `sqlite:${join(tempDir(), 'cursors.db')}`
    const args = ['--port', '0', '--key', KEY, '--db', db]
    const servers = await Promise.all([
      startServer(args, { PETSTORE_CURSOR_SECRET: 'one secret' }),
      startServer([...args, '--cursor-secret', 'one secret']),
      startServer(args, { PETSTORE_CURSOR_SECRET: 'another secret' }),
      startServer(args),
    ])
    try {
      const [issuer, sameByFlag, other, unset] = servers as [RunningServer, RunningServer, RunningServer, RunningServer]
      for (let i = 0; i < 3; i++) await createPet(issuer.url, KEY, { name: `c${i}`, categoryId: 1 })
      const first = await fetch(`${issuer.url}/pets?limit=1`, { headers: auth(KEY) })
      await first.body?.cancel()
      const next = /<\/v1([^>]+)>/.exec(first.headers.get('link') ?? '')?.[1]
      assert.ok(next, 'a next link')
      const follow = async (server: RunningServer) => {
        const res = await fetch(`${server.url}${next}`, { headers: auth(KEY) })
        return { status: res.status, body: await res.json() }
      }
      assert.equal((await follow(sameByFlag)).status, 200)
      for (const server of [other, unset]) {
        const { status, body } = await follow(server)
        assert.equal(status, 400)
        assert.equal(body.details[0].path, 'cursor')
      }
      assert.ok(!servers.some((server) => `${server.stdout()}${server.stderr()}`.includes('one secret')))
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
    }
  })
})
