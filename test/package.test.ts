/**
 * The package as a user gets it: dist/ packed by `npm pack`, installed into an
 * empty project with `npm install --prefer-offline` (its dependencies' tarballs
 * from npm's cache, which `npm ci` fills; `--offline` failed on a fresh machine,
 * whose cache holds no registry metadata to resolve the version ranges with),
 * and its binary started there as npx would, on this Node
 * and on Node 22 and 24 when npx's cache has them (see test/helpers/runtimes.ts).
 *
 * It packs dist/ as it is: run `npm run build` first (CI does).
 * To check more of the installed package, add a test below: `project` is the
 * installed project, `start()` starts its binary.
 *
 * Run: npm run build && node --import tsx --test test/package.test.ts
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { OFFLINE_INSTALL, packTarball } from './helpers/pack.js'
import { type Located, locateNpx } from './helpers/runtimes.js'
import {
  killAll,
  type RunningServer,
  repoRoot,
  runScriptToExit,
  type ScriptRuntime,
  startScript,
} from './helpers/spawn-server.js'

const run = promisify(execFile)
const KEY = 'package-test-key'
const dir = mkdtempSync(join(tmpdir(), 'petstore-package-'))
const project = join(dir, 'project')
const installed = join(project, 'node_modules', 'petstore-server')

after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

before(async () => {
  const tarball = await packTarball(dir)
  rmSync(project, { recursive: true, force: true })
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), '{ "name": "first-contact", "private": true }\n')
  // --ignore-scripts: the package has no install script, and a dependency's (swagger-ui-dist's
  // @scarf/scarf, install analytics) calls out to the network, which hung an install here for 10 min.
  await run('npm', ['install', ...OFFLINE_INSTALL, '--ignore-scripts', tarball], { cwd: project, timeout: 120_000 })
})

/** What the binary wrote on stderr, without npm's own warnings (about the machine's npm config, say). */
const ours = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => !/^npm (warn|WARN|notice)/.test(line))
    .join('\n')

/** Whether `version` (`v22.13.0`) has node:sqlite without a flag. */
function hasNodeSqlite(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 13)
}

/**
 * The project's binary on the Node at `binary`: what `npx petstore-server` runs
 * there, started directly because npx does not pass SIGTERM on to it.
 */
function binaryOn(binary: string): ScriptRuntime {
  return { command: binary, args: [], cwd: project }
}

/** The installed binary, as npx finds it. */
const BIN = 'node_modules/.bin/petstore-server'

const start = (runtime: ScriptRuntime, args: string[]): Promise<RunningServer> =>
  startScript(BIN, ['--port', '0', '--key', KEY, ...args], undefined, runtime)

// Found before any test is declared: declared after an await, the tests below could start after the
// first suite had run and the root's `after` had removed the installed project (seen under CI's load:
// every test of the installed package failed with spawn ENOENT).
const others: [string, Located][] = [
  ['Node 22', await locateNpx('node@22', 'node', 'PETSTORE_TEST_NODE22')],
  ['Node 24', await locateNpx('node@24', 'node', 'PETSTORE_TEST_NODE24')],
]
// Under .ci/node-versions this Node is 22 or 24 already: run each version once.
const located: [string, Located][] = [
  ['this Node', { binary: process.execPath, version: process.version }],
  ...others.filter(([, found]) => !('version' in found) || found.version !== process.version),
]

describe('the packed tarball', () => {
  it('holds dist, README, LICENSE and CHANGELOG, and no sources or tests', () => {
    for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/bin/petstore-server.js']) {
      assert.ok(existsSync(join(installed, file)), `${file} is missing from the tarball`)
    }
    for (const folder of ['src', 'test', 'bin', 'bench', 'node_modules']) {
      assert.ok(!existsSync(join(installed, folder)), `${folder}/ should not be in the tarball`)
    }
    assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /^MIT License/)
  })

  it("petstore-server/node loads @whatwg-node/server only for a handler that is not createPetstore's (withDocs keeps it)", async () => {
    // CommonJS, so that require.cache tells what is loaded. Merely loaded, its fetch ponyfill made
    // other servers in the process slower (bench/README.md, "How to read the output").
    const script = `
const http = require('node:http')
const { createPetstore, memoryStore } = require('petstore-server')
const { toNodeListener } = require('petstore-server/node')
const { withDocs } = require('petstore-server/docs')
const loaded = () => Object.keys(require.cache).some((file) => file.includes('@whatwg-node'))
async function answer(listener) {
  const server = http.createServer(listener).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const headers = { authorization: 'Bearer k' }
  const response = await fetch('http://127.0.0.1:' + server.address().port + '/v1/pets', { headers })
  const text = await response.text()
  server.close()
  return response.status + ' ' + text
}
;(async () => {
  const ours = await answer(toNodeListener(createPetstore({ store: memoryStore(), keys: ['k'] })))
  const docs = await answer(toNodeListener(withDocs(createPetstore({ store: memoryStore(), keys: ['k'] }))))
  const before = loaded()
  const other = await answer(toNodeListener(() => new Response('other')))
  console.log(JSON.stringify({ ours, docs, before, other, after: loaded() }))
})()
`
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: project })
    assert.deepEqual(JSON.parse(stdout), {
      ours: '200 []',
      docs: '200 []',
      before: false,
      other: '200 other',
      after: true,
    })
  })

  it('loads without msw, its optional peer, which only petstore-server/msw needs', async () => {
    // The empty project has no msw: the main entry must not reach for it, in either format.
    const script = `
const { createPetstore } = require('petstore-server')
const loaded = Object.keys(require.cache).some((file) => file.includes('/msw/'))
import('petstore-server').then(async (esm) => {
  const msw = await import('petstore-server/msw').then(() => 'loaded', (error) => error.code + ' ' + error.message.split('\\n')[0])
  console.log(JSON.stringify({ cjs: typeof createPetstore, esm: typeof esm.createPetstore, loaded, msw }))
})
`
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: project })
    const seen = JSON.parse(stdout)
    assert.deepEqual({ ...seen, msw: undefined }, { cjs: 'function', esm: 'function', loaded: false, msw: undefined })
    assert.match(seen.msw, /^ERR_MODULE_NOT_FOUND .*'msw'/)
  })

  it("its types serve a strict project that writes declarations, with exactOptionalPropertyTypes (TypeScript's own tsc --init)", async () => {
    const types = join(project, 'types-check')
    mkdirSync(types, { recursive: true })
    writeFileSync(
      join(types, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          declaration: true,
          emitDeclarationOnly: true,
          outDir: 'out',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2023', 'dom'],
          types: [],
        },
        files: ['handler.mts'],
      }),
    )
    // An exported handler (a Next.js route, a package re-exporting it), and options passed on as they
    // come, possibly undefined: the two failed before.
    writeFileSync(
      join(types, 'handler.mts'),
      `import { createPetstore, memoryStore, PetstoreError } from 'petstore-server'
export const handler = createPetstore({ store: memoryStore(), keys: ['k'] })
export const GET = handler
export function make(basePath?: string, onError?: (error: unknown) => void, cursorSecret?: string) {
  return createPetstore({ store: memoryStore({ pets: undefined }), keys: ['k'], basePath, onError, cursorSecret })
}
export const failure = new PetstoreError(404, 'not_found', 'No such pet')
`,
    )
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '-p', types], { cwd: types }).catch((error) => error)
    assert.equal(result.stdout, '', 'tsc reported errors')
    assert.match(readFileSync(join(types, 'out', 'handler.d.mts'), 'utf8'), /export declare const handler: /)
  })
})

for (const [name, found] of located) {
  const title = `petstore-server installed from the tarball, on ${name}${'version' in found ? ` (${found.version})` : ''}`
  describe(title, { skip: 'skip' in found ? found.skip : false }, () => {
    if (!('binary' in found)) return
    const runtime = binaryOn(found.binary)
    const sqlite = hasNodeSqlite(found.version)

    it(
      sqlite
        ? 'serves on its default database, ./petstore.db through node:sqlite'
        : 'without a SQLite driver, serves its default from memory and says so in one line',
      async () => {
        if (!sqlite) {
          const server = await start(runtime, [])
          try {
            assert.match(
              ours(server.stderr()),
              /^petstore-server: v[\d.]+ has no built-in SQLite and better-sqlite3 is not installed: pets are kept in memory[^\n]*npm install better-sqlite3[^\n]*\n/,
            )
            const created = await fetch(`${server.url}/pets`, {
              method: 'POST',
              headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
              body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
            })
            assert.equal(created.status, 201)
            assert.ok(!existsSync(join(project, 'petstore.db')), 'no database file without a driver')
          } finally {
            assert.equal((await server.stop()).code, 0)
          }
          return
        }
        const server = await start(runtime, [])
        try {
          const created = await fetch(`${server.url}/pets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Rex', status: 'available', categoryId: 1 }),
          })
          assert.equal(created.status, 201)
          const listed = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${KEY}` } })
          assert.equal(listed.status, 200)
          assert.deepEqual(
            ((await listed.json()) as { name: string }[]).map((pet) => pet.name),
            ['Rex'],
          )
          assert.ok(existsSync(join(project, 'petstore.db')), 'the default database is ./petstore.db')
        } finally {
          assert.equal((await server.stop()).code, 0)
          rmSync(join(project, 'petstore.db'), { force: true })
        }
      },
    )

    if (!sqlite) {
      it('--db sqlite:… without a SQLite driver says in one line to install better-sqlite3, exit 1', async () => {
        const { code, stdout, stderr } = await runScriptToExit(
          BIN,
          ['--db', 'sqlite:./petstore.db'],
          undefined,
          runtime,
        )
        assert.equal(code, 1)
        assert.equal(stdout, '')
        assert.match(
          ours(stderr),
          /^petstore-server: [^\n]*npm install better-sqlite3[^\n]*; or, to try it out, --db memory\n$/,
        )
      })
    }

    it('serves --db memory, with its OpenAPI document', async () => {
      const server = await start(runtime, ['--db', 'memory'])
      try {
        const listed = await fetch(`${server.url}/pets`, { headers: { authorization: `Bearer ${KEY}` } })
        assert.equal(listed.status, 200)
        assert.deepEqual(await listed.json(), [])
        const document = await fetch(`${server.url}/openapi.json`)
        assert.equal(document.status, 200)
        assert.equal(((await document.json()) as { openapi: string }).openapi, '3.1.0')
      } finally {
        assert.equal((await server.stop()).code, 0)
      }
    })

    for (const [scheme, driver] of [
      ['postgres', 'pg'],
      ['mysql', 'mysql2'],
    ] as const) {
      const db = `${scheme}://petstore@127.0.0.1:9/none`
      it(`--db ${scheme}://… without ${driver} says in one line to install it, exit 1`, async () => {
        const { code, stdout, stderr } = await runScriptToExit(BIN, ['--db', db], undefined, runtime)
        assert.equal(code, 1)
        assert.equal(stdout, '')
        assert.match(ours(stderr), new RegExp(`^petstore-server: [^\\n]*npm install ${driver}\\n$`))
      })
    }
  })
}
