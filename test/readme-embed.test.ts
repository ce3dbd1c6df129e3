/**
 * The README's "Embed it" steps, followed by copy and paste alone: its commands, its
 * `server.ts` and its start line are read from README.md (the blocks marked
 * `<!-- doc-test: embed-… -->`), run in an empty folder with the packed tarball in place of
 * `petstore-server`, and the server they start must answer a create with 201. So the README
 * cannot drift from what works in a fresh `npm init -y` project.
 *
 * It packs dist/ as it is: run `npm run build` first (CI does).
 *
 * Run: npm run build && node --import tsx --test test/readme-embed.test.ts
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { promisify } from 'node:util'
import { codeBlocks, readDoc } from './helpers/markdown.js'
import { OFFLINE_INSTALL, packTarball } from './helpers/pack.js'
import { killAll, repoRoot, startScript } from './helpers/spawn-server.js'

const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'petstore-readme-'))

after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

const blocks = codeBlocks('README.md', readDoc(repoRoot, 'README.md'))
const marked = (marker: string) => {
  const found = blocks.filter((block) => block.marker === marker)
  assert.equal(found.length, 1, `README.md has one block marked <!-- doc-test: ${marker} -->`)
  return found[0]?.code ?? ''
}
const fileBlock = blocks.find((block) => block.marker?.startsWith('embed-file '))

/** A shell line's commands, `&&` apart, each as words: the README's commands need no quoting. */
const commands = (text: string) =>
  text
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => line.split('&&').map((command) => command.trim().split(/\s+/)))

it("the README's embedding steps serve a create with 201 from the packed tarball", { timeout: 240_000 }, async () => {
  assert.ok(fileBlock, 'README.md has a block marked <!-- doc-test: embed-file NAME -->')
  const tarball = await packTarball(dir)
  // Scarf's analytics (swagger-ui-dist's dependency) would call out at install: the README's opt-out.
  const env = { ...process.env, SCARF_ANALYTICS: 'false' }
  let cwd = join(dir, 'home')
  mkdirSync(cwd)
  for (const [program, ...args] of commands(marked('embed-commands'))) {
    if (program === 'mkdir') mkdirSync(join(cwd, ...args))
    else if (program === 'cd') cwd = join(cwd, ...args)
    else if (program === 'npm' && args[0] === 'install') {
      const packages = args.slice(1).map((name) => (name === 'petstore-server' ? tarball : name))
      assert.ok(packages.includes(tarball), 'the README installs petstore-server')
      await run('npm', ['install', ...OFFLINE_INSTALL, ...packages], { cwd, env, timeout: 180_000 })
    } else if (program === 'npm') await run('npm', args, { cwd, env })
    else assert.fail(`a command this test does not know: ${program}`)
  }
  const manifest = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'))
  assert.equal(manifest.type, 'module', 'the steps make an ES module project')
  writeFileSync(join(cwd, fileBlock.marker?.slice('embed-file '.length) ?? ''), fileBlock.code)

  // `VAR=value npx tsx server.ts`: the variables as written (but a free port), tsx as npx finds it.
  const [start] = commands(marked('embed-start'))
  assert.ok(start, 'README.md has a start command')
  const variables = Object.fromEntries(
    start.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split('=', 2) as [string, string]),
  )
  const [npx, program, ...args] = start.filter((word) => !/^[A-Z_]+=/.test(word))
  assert.equal(npx, 'npx')
  const key = (variables.PETSTORE_API_KEYS ?? '').split(',')[0] ?? ''
  const server = await startScript(
    args.join(' '),
    [],
    { ...variables, PORT: '0' },
    {
      command: join(cwd, 'node_modules', '.bin', program ?? ''),
      args: [],
      cwd,
    },
  )
  try {
    const created = await fetch(`${server.url}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
    })
    assert.equal(created.status, 201, await created.text())
  } finally {
    assert.deepEqual(await server.stop(), { code: 0, signal: null }, 'the server stops on SIGTERM')
  }
})
