/**
 * What a user copies is what the tests run: every program in examples/ is in
 * the docs (README.md or docs/*.md) verbatim, and every one is run by a test (the servers by
 * test/runtimes.test.ts on their runtimes, `*.test.ts` examples by `npm test`).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { it } from 'node:test'
import { docFiles } from './helpers/markdown.js'
import { repoRoot } from './helpers/spawn-server.js'

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8')
const examples = readdirSync(join(repoRoot, 'examples')).filter((file) => file.endsWith('.ts'))

it('every example is in the docs, verbatim', () => {
  const docs = docFiles(repoRoot).map(read).join('\n')
  assert.ok(examples.length >= 8, 'the examples were found')
  const missing = examples.filter((file) => !docs.includes(`\`\`\`ts\n${read(`examples/${file}`).trimEnd()}\n\`\`\``))
  assert.deepEqual(missing, [], 'snippets in the docs that differ from their file (or are absent)')
})

it('every example is run by a test', () => {
  // The Cloudflare Worker runs on workerd in its own file.
  const matrix = read('test/runtimes.test.ts') + read('test/workerd.test.ts')
  const unrun = examples.filter((file) => !file.endsWith('.test.ts') && !matrix.includes(`examples/${file}`))
  assert.deepEqual(unrun, [])
})

it("the MSW example's scripts are in docs/msw.md verbatim, and are run by a test", () => {
  const page = read('docs/msw.md')
  const shown = ['app.ts', 'setup-server.test.ts']
  const missing = shown.filter((file) => !page.includes(`\`\`\`ts\n${read(`examples/msw/${file}`).trimEnd()}\n\`\`\``))
  assert.deepEqual(missing, [], 'docs/msw.md snippets that differ from their file (or are absent)')
  // The page and its server run in Chromium (serve.ts bundles app.ts); the test file runs in `npm test`.
  const browser = read('test/msw-browser.test.ts')
  assert.match(browser, /from '\.\.\/examples\/msw\/serve\.js'/)
  assert.match(read('examples/msw/serve.ts'), /here\('\.\/app\.ts'\)/)
  assert.match(read('package.json'), /examples\/\*\/\*\.test\.ts/)
})

it('a copied example, and the JSDoc of the package, name no path the package lacks', () => {
  // Copied into a project, an example's run line must name the file itself: there is no examples/ there.
  const copied = [...examples.map((file) => `examples/${file}`), 'examples/msw/setup-server.test.ts']
  const runLines = copied.flatMap((path) =>
    read(path)
      .split('\n')
      .filter((line) => line.startsWith('//') && /examples\//.test(line) && !/wrangler/.test(line))
      .map((line) => `${path}: ${line}`),
  )
  assert.deepEqual(runLines, [])
  // The package ships dist/ without docs/ or examples/: its entry files' JSDoc links to the repository.
  const entries = [
    'src/index.ts',
    'src/testing.ts',
    ...readdirSync(join(repoRoot, 'adapters')).map((f) => `adapters/${f}`),
  ]
  const bare = entries
    .filter((path) => path.endsWith('.ts'))
    .flatMap((path) =>
      [...read(path).matchAll(/(?<![/\w])(?:docs|examples)\/[\w./-]+\.(?:md|ts)/g)].map((m) => `${path}: ${m[0]}`),
    )
  assert.deepEqual(bare, [])
})
