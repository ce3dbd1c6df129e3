/**
 * What a plain start of the binary prints, as docs/getting-started.md shows it:
 * the run's key on stderr and the ready line on stdout, and nothing else; not
 * node:sqlite's ExperimentalWarning (Node 22), which the binary keeps off
 * stderr while other warnings still print. And the quick starts' create with
 * curl, which the binary answers 201.
 *
 * Run: node --import tsx --test test/start-lines.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { codeBlocks, readDoc } from './helpers/markdown.js'
import { killAll, repoRoot, runScriptToExit, startServer } from './helpers/spawn-server.js'

const dir = mkdtempSync(join(tmpdir(), 'petstore-start-lines-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

test('a start on a SQLite file prints the key line and the ready line, and no warning', async () => {
  const server = await startServer(['--port', '0', '--db', `sqlite:${join(dir, 'pets.db')}`])
  await server.stop()
  assert.equal(server.stdout(), `petstore-server listening on ${server.url}\n`)
  const lines = server.stderr().split('\n')
  assert.match(lines[0] ?? '', /^petstore-server: no API key configured; this run accepts: [\w-]+$/)
  assert.deepEqual(lines.slice(1), ['petstore-server: SIGTERM, finishing requests in flight', ''])
})

test("node:sqlite's ExperimentalWarning is kept off stderr; other warnings print", async () => {
  const script = join(dir, 'warnings.ts')
  writeFileSync(
    script,
    [
      `import { quietSqliteWarning } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'bin/quiet-warnings.ts')).href)}`,
      'quietSqliteWarning()',
      // The message Node 22 gives when node:sqlite loads.
      "process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning')",
      "process.emitWarning('Something else is an experimental feature', 'ExperimentalWarning')",
      "process.emitWarning('a plain warning')",
    ].join('\n'),
  )
  const { code, stderr } = await runScriptToExit(script, [])
  assert.equal(code, 0, stderr)
  assert.doesNotMatch(stderr, /SQLite/)
  assert.match(stderr, /ExperimentalWarning: Something else is an experimental feature/)
  assert.match(stderr, /Warning: a plain warning/)
})

test("the quick starts' curl creates are answered 201", async () => {
  const bodies = ['README.md', 'docs/getting-started.md'].flatMap((file) => {
    const found = codeBlocks(file, readDoc(repoRoot, file))
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => [...block.code.matchAll(/curl [\s\S]*?-d '([^']*)'[\s\S]*?\/v1\/pets\b/g)])
      .map((match) => match[1] as string)
    assert.ok(found.length > 0, `${file} shows a create with curl`)
    return found
  })
  const server = await startServer(['--port', '0', '--db', 'memory', '--key', 'secret'])
  try {
    for (const body of bodies) {
      const created = await fetch(`${server.url}/pets`, {
        method: 'POST',
        headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
        body,
      })
      assert.equal(created.status, 201, `${body}: ${await created.text()}`)
    }
  } finally {
    await server.stop()
  }
})
