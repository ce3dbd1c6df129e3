/**
 * The runtime matrix: every way of serving the API, each an example program
 * of examples/ started on its real runtime, passes the same HTTP checks
 * (test/helpers/http-checks.ts) over real HTTP and stops on SIGTERM with exit
 * code 0. One table of servers, one set of checks, as whatwg-node tests its
 * server adapters. Then the adapters' graceful close on each runtime, and
 * the binary on Bun and Deno with SQLite.
 *
 * Bun and Deno are installed on first use at their pinned versions
 * (test/helpers/on-demand.ts), or come from $PETSTORE_TEST_BUN /
 * $PETSTORE_TEST_DENO; without them their tests skip with the reason, except
 * under CI (`CI` set), where that is a failure.
 *
 * Run: node --import tsx --test test/runtimes.test.ts
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { skipOrFail, underCi } from './helpers/ci.js'
import { call } from './helpers/client.js'
import { checkBodies, checkServing, remote } from './helpers/http-checks.js'
import { bunRuntime, denoRuntime, type Located, locate, type RuntimeName } from './helpers/runtimes.js'
import { killAll, NODE_TSX, repoRoot, type ScriptRuntime, startScript } from './helpers/spawn-server.js'

after(killAll)
const dir = mkdtempSync(join(tmpdir(), 'petstore-runtimes-'))
after(() => rmSync(dir, { recursive: true, force: true }))

// Looked up before any test is declared: the runner starts the tests declared
// so far at the first await, and ends the file when they are done.
const [bun, deno] = await Promise.all([locate('bun'), locate('deno')])
type Runtime = RuntimeName | 'node'
const located: Record<Runtime, Located> = {
  node: { binary: process.execPath, version: process.versions.node },
  bun,
  deno,
}
// Under CI a missing runtime fails its tests instead of skipping them.
if (underCi)
  for (const [name, found] of Object.entries(located)) if ('skip' in found) throw new Error(`${name}: ${found.skip}`)

/** Why `runtime`'s tests skip here, or false. */
const skip = (runtime: Runtime): string | false => {
  const found = located[runtime]
  return 'skip' in found ? found.skip : false
}
const binary = (runtime: Runtime): string => {
  const found = located[runtime]
  return 'binary' in found ? found.binary : runtime
}
const version = (runtime: Runtime): string => {
  const found = located[runtime]
  return 'version' in found ? ` ${found.version}` : ''
}

const KEY = 'example-key'

/** The app's own route beside the API: a JSON body parsed by the framework's parser. */
async function frameworkParsesJson(origin: string): Promise<void> {
  const response = await fetch(`${origin}/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"hello":"world"}',
  })
  assert.equal(response.status, 200)
  assert.deepEqual(await response.json(), { received: { hello: 'world' } })
}

interface Served {
  name: string
  script: string
  runtime: Runtime
  /** Where the example serves the API. */
  basePath: string
  /** Checks of this one after the shared ones. */
  extra?: (origin: string) => Promise<void>
}

const SERVED: Served[] = [
  { name: 'Node, petstore-server/node', script: 'examples/node.ts', runtime: 'node', basePath: '/v1' },
  { name: 'Bun, petstore-server/bun', script: 'examples/bun.ts', runtime: 'bun', basePath: '/v1' },
  { name: 'Deno, petstore-server/deno', script: 'examples/deno.ts', runtime: 'deno', basePath: '/v1' },
  {
    name: 'Express under /api',
    script: 'examples/express.ts',
    runtime: 'node',
    basePath: '/api/v1',
    extra: frameworkParsesJson,
  },
  {
    name: 'Fastify under /api',
    script: 'examples/fastify.ts',
    runtime: 'node',
    basePath: '/api/v1',
    extra: frameworkParsesJson,
  },
  {
    name: 'Hono under /api',
    script: 'examples/hono.ts',
    runtime: 'node',
    basePath: '/api/v1',
    extra: frameworkParsesJson,
  },
]

/** How each runtime runs an example: Deno with no more permissions than the README gives it. */
function runtimeFor(runtime: Runtime, permissions: readonly string[]): ScriptRuntime {
  if (runtime === 'bun') return bunRuntime(binary('bun'))
  if (runtime === 'deno') return denoRuntime(binary('deno'), permissions)
  return NODE_TSX
}

describe('every way of serving passes the shared HTTP checks', { concurrency: true, timeout: 60_000 }, () => {
  for (const served of SERVED) {
    it(`${served.name} (${served.script} on ${served.runtime}${version(served.runtime)})`, {
      skip: skip(served.runtime),
    }, async () => {
      const server = await startScript(
        served.script,
        [],
        // Two keys, comma-separated as the binary reads them: the checks use the second.
        { PORT: '0', PETSTORE_API_KEYS: `retired-key,${KEY}` },
        runtimeFor(served.runtime, ['--allow-net', '--allow-env']),
      )
      try {
        assert.equal(server.url, `${server.origin}${served.basePath}`, 'the example prints where the API is')
        await checkServing(remote(server.origin), served.basePath, KEY)
        await served.extra?.(server.origin)
        await checkBodies(remote(server.origin), served.basePath, KEY)
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null }, `${served.script} stops on SIGTERM`)
      }
    })
  }

  it('Next.js route handler (examples/nextjs-route.ts, its exports called directly)', async () => {
    const route: Record<string, unknown> = await import('../examples/nextjs-route.js')
    assert.deepEqual(Object.keys(route).sort(), ['GET', 'HEAD', 'OPTIONS', 'POST'])
    // What Next.js does: call the export named after the method.
    const next = (request: Request) => (route[request.method] as (request: Request) => Promise<Response>)(request)
    const key = process.env.PETSTORE_API_KEYS ?? 'secret'
    await checkServing(next, '/api/v1', key)
    await checkBodies(next, '/api/v1', key)
  })
})

const run = promisify(execFile)

/** Runs a helper script on `runtime` to its end; resolves with its stdout. */
async function runHelper(runtime: ScriptRuntime, script: string, args: string[]): Promise<string> {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const { stdout } = await run(runtime.command, [...runtime.args, script, ...args], {
    cwd: repoRoot,
    env: { ...env, ...runtime.env },
    timeout: 50_000,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${script} failed:\n${error.stderr || error.stdout || error.message}`)
  })
  return stdout
}

describe('adapters close gracefully', { concurrency: true, timeout: 60_000 }, () => {
  for (const runtime of ['node', 'bun', 'deno'] as const) {
    it(`petstore-server/${runtime} on ${runtime}${version(runtime)}`, { skip: skip(runtime) }, async () => {
      // Deno: the helper imports the adapter by a computed path, which needs read access.
      const stdout = await runHelper(
        runtimeFor(runtime, ['--allow-net', '--allow-read']),
        'test/helpers/graceful-close.ts',
        [runtime],
      )
      assert.equal(stdout.trim(), 'ok')
    })
  }
})

/** The file package.json's `bin` names, which `bunx --bun petstore-server` and `deno run npm:petstore-server` run. */
const BUILT = 'dist/bin/petstore-server.js'
const BUILT_RUN: Record<RuntimeName, string> = {
  bun: 'bunx --bun petstore-server',
  deno: 'deno run npm:petstore-server',
}

/** Why the built binary is not tested: not built, or built before the last change of a source. */
function builtSkipReason(): string | false {
  const built = join(repoRoot, BUILT)
  if (!existsSync(built)) return `${BUILT} is not built: npm run build`
  const newest = Math.max(
    ...['src', 'adapters', 'bin'].flatMap((folder) =>
      readdirSync(join(repoRoot, folder), { recursive: true, encoding: 'utf8' }).map(
        (file) => statSync(join(repoRoot, folder, file)).mtimeMs,
      ),
    ),
  )
  return statSync(built).mtimeMs < newest ? `${BUILT} is older than the sources: npm run build` : false
}
// Under CI the build runs first: a binary older than its sources is a failure there.
const builtSkip = skipOrFail(builtSkipReason())

/** Deno as a user runs the published binary: no import map, no sloppy imports (it is one bundled file). */
function plainDeno(binary: string, permissions: readonly string[]): ScriptRuntime {
  const { env } = denoRuntime(binary, [])
  return { command: binary, args: ['run', ...permissions], env }
}

describe('the binary on Bun and Deno, with SQLite', { concurrency: true, timeout: 60_000 }, () => {
  const permissions = ['--allow-net', '--allow-env', '--allow-read', '--allow-write']
  const drivers: Record<RuntimeName, string> = { bun: 'bun:sqlite', deno: 'node:sqlite' }

  for (const runtime of ['bun', 'deno'] as const) {
    it(`bin/petstore-server.ts on ${runtime}${version(runtime)}: serves, keeps pets across a restart`, {
      skip: skip(runtime),
    }, async () => {
      const args = ['--port', '0', '--db', `sqlite:${join(dir, `${runtime}.db`)}`, '--key', KEY]
      const start = () => startScript('bin/petstore-server.ts', args, {}, runtimeFor(runtime, permissions))
      const api = (origin: string) => remote(origin)
      const auth = { authorization: `Bearer ${KEY}` }

      const first = await start()
      let pets: unknown
      try {
        await checkServing(api(first.origin), '/v1', KEY)
        pets = (await call(api(first.origin), '/v1/pets', { headers: auth })).body
        assert.equal((pets as unknown[]).length, 1)
      } finally {
        assert.deepEqual(await first.stop(), { code: 0, signal: null })
      }

      const second = await start()
      try {
        assert.deepEqual((await call(api(second.origin), '/v1/pets', { headers: auth })).body, pets)
        assert.equal((await call(api(second.origin), '/healthz', { auth: false })).status, 200)
      } finally {
        assert.deepEqual(await second.stop(), { code: 0, signal: null })
      }
    })

    it(`the built binary on ${runtime}${version(runtime)}, as \`${BUILT_RUN[runtime]}\` runs it`, {
      skip: skip(runtime) || builtSkip,
    }, async () => {
      const built = runtime === 'bun' ? bunRuntime(binary('bun')) : plainDeno(binary('deno'), permissions)
      const args = ['--port', '0', '--db', `sqlite:${join(dir, `${runtime}-built.db`)}`, '--key', KEY]
      const server = await startScript(BUILT, args, {}, built)
      try {
        await checkServing(remote(server.origin), '/v1', KEY)
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null })
      }
    })

    it(`sqliteStore on ${runtime}${version(runtime)} chooses ${drivers[runtime]}`, {
      skip: skip(runtime),
    }, async () => {
      const stdout = await runHelper(runtimeFor(runtime, permissions), 'test/helpers/sqlite-runtime.ts', [
        mkdtempSync(join(dir, `${runtime}-`)),
        drivers[runtime],
        'auto',
      ])
      assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop() ?? ''), { auto: drivers[runtime] })
    })
  }
})
