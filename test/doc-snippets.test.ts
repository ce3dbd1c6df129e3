/**
 * The TypeScript in README.md and docs/*.md is code that works. Every ```ts block is
 * type-checked, all of them in one TypeScript program against the package's sources (the
 * tsconfig's `paths`), each block a module of its own held in memory. A block marked
 * `<!-- doc-test: run -->` is run to its end and must exit 0; one marked
 * `<!-- doc-test: serve -->` must print its `http://…` URL, answer a create with 201 and
 * exit 0 on SIGTERM. CONTRIBUTING.md describes the markers.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, describe, it } from 'node:test'
import ts from 'typescript'
import { type CodeBlock, codeBlocks, docFiles, readDoc } from './helpers/markdown.js'
import { killAll, NODE_TSX, repoRoot, runScriptToExit, startScript } from './helpers/spawn-server.js'

const KEY = 'doc-test-key'
/**
 * `run`, `serve`, `typecheck` (the default), `file NAME` and `client-commands` here; the `embed-`
 * ones in test/readme-embed.test.ts.
 */
const MARKER = /^(typecheck|run|serve|client-commands|file [\w.-]+|embed-commands|embed-start|embed-file [\w.-]+)$/

const blocks = docFiles(repoRoot).flatMap((file) => codeBlocks(file, readDoc(repoRoot, file)))
const typescript = blocks.filter((block) => block.lang === 'ts' || block.lang === 'typescript')
const name = (block: CodeBlock) => `${block.file}:${block.line}`

/**
 * Type-checks `sources` (virtual path → code) in one program with the repository's compiler
 * options; resolves imports as files beside test/ would. Returns the errors, one line each.
 */
function typeErrors(sources: Map<string, string>): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(repoRoot, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
    },
  })
  assert.ok(parsed, 'tsconfig.json could not be read')
  // Every block is a module, even one without import or export (top-level await).
  const options = { ...parsed.options, noEmit: true, moduleDetection: ts.ModuleDetectionKind.Force }
  const host = ts.createCompilerHost(options)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (path) => sources.has(path) || fileExists.call(host, path)
  host.readFile = (path) => sources.get(path) ?? readFile.call(host, path)
  host.getSourceFile = (path, language, ...rest) => {
    const code = sources.get(path)
    return code === undefined
      ? getSourceFile.call(host, path, language, ...rest)
      : ts.createSourceFile(path, code, language)
  }
  // Deno's global, as tsc sees it for examples/deno.ts.
  const rootNames = [...sources.keys(), join(repoRoot, 'test/types/deno.d.ts')]
  const program = ts.createProgram({ rootNames, options, host })
  // The blocks' own errors only: checking the sources they import as well took three times as long.
  const diagnostics = [...sources.keys()].flatMap((path) => {
    const file = program.getSourceFile(path)
    return file ? [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)] : []
  })
  return [...program.getOptionsDiagnostics(), ...diagnostics].map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    if (!diagnostic.file || diagnostic.start === undefined) return message
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${diagnostic.file.fileName}:${line + 1}: ${message}`
  })
}

/** `<!-- doc-test: file NAME -->`: the block is the file NAME, which the page's other files import. */
const fileName = (block: CodeBlock) => /^file ([\w.-]+)$/.exec(block.marker ?? '')?.[1]

/**
 * Where a block lives as a module: beside the Markdown file it came from, under its file name
 * if the page gives one, else named after its line.
 */
const modulePath = (block: CodeBlock) => {
  const file = fileName(block)
  return file === undefined
    ? join(repoRoot, `${block.file.replace(/\.md$/, '')}.line-${block.line}.ts`)
    : join(repoRoot, dirname(block.file), file)
}

/** Turns `docs/x.line-12.ts:3: …` into `docs/x.md:15: …`, the line in the Markdown file. */
function inMarkdown(error: string, byPath: Map<string, CodeBlock>): string {
  for (const [path, block] of byPath) {
    if (!error.startsWith(`${path}:`)) continue
    const [line = '0', ...rest] = error.slice(path.length + 1).split(':')
    return `${block.file}:${block.line + Number(line)}:${rest.join(':')}`
  }
  return error
}

after(killAll)

describe('TypeScript in the docs', () => {
  it('every marker is one the tests know', () => {
    const unknown = blocks.filter((block) => block.marker !== undefined && !MARKER.test(block.marker))
    assert.deepEqual(unknown.map(name), [])
  })

  it('every ```ts block type-checks, in one program', () => {
    assert.ok(typescript.length >= 15, `found ${typescript.length} blocks`)
    const byPath = new Map(typescript.map((block) => [modulePath(block), block]))
    const errors = typeErrors(new Map([...byPath].map(([path, block]) => [path, block.code])))
    assert.deepEqual(
      errors.map((error) => inMarkdown(error, byPath)),
      [],
    )
  })

  const runnable = typescript.filter((block) => block.marker === 'run' || block.marker === 'serve')
  it('some blocks are run', () => assert.ok(runnable.length >= 4, `found ${runnable.length}`))

  describe('blocks that run', { concurrency: true }, () => {
    // Files of their own inside the repository, where tsx finds tsconfig's `paths` and node_modules.
    const dir = mkdtempSync(join(repoRoot, '.doc-snippets-'))
    after(() => rmSync(dir, { recursive: true, force: true }))

    for (const block of runnable) {
      it(`${name(block)} ${block.marker === 'serve' ? 'serves a create with 201' : 'runs to exit 0'}`, async () => {
        const script = join(dir, `${block.file.replace(/\W/g, '-')}-${block.line}.ts`)
        writeFileSync(script, block.code)
        if (block.marker === 'run') {
          const { code, stderr } = await runScriptToExit(script, [], {})
          assert.equal(code, 0, `${name(block)} exited ${code}:\n${stderr}`)
          return
        }
        const server = await startScript(script, [], { PORT: '0', PETSTORE_API_KEYS: KEY })
        try {
          const created = await fetch(`${server.origin}/v1/pets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
          })
          assert.equal(created.status, 201, await created.text())
        } finally {
          assert.deepEqual(await server.stop(), { code: 0, signal: null }, `${name(block)} stops on SIGTERM`)
        }
      })
    }
  })
})

/**
 * A page's test of a client, run as the page says: its `file NAME` blocks saved side by side,
 * the `petstore-server …` command of its `client-commands` block started there (on a free port,
 * given to the test as PETSTORE_ORIGIN), then its `npx tsx --test FILE`.
 */
describe('client tests the docs run against the binary', () => {
  const commandBlocks = blocks.filter((block) => block.marker === 'client-commands')
  it('some pages have one', () => assert.ok(commandBlocks.length >= 1, `found ${commandBlocks.length}`))

  for (const block of commandBlocks) {
    it(`${name(block)}: the test passes against the server`, { timeout: 120_000 }, async () => {
      const commands = block.code
        .replace(/\s*\\\n\s*/g, ' ')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '' && !line.startsWith('#'))
      const [serve = '', run = ''] = commands
      assert.equal(commands.length, 2, `${name(block)}: a petstore-server line, then an npx tsx --test line`)
      assert.match(serve, /^petstore-server( [\w.:,=/-]+)+$/)
      const testArgs = /^npx tsx --test((?: --test-concurrency=\d+)?(?: [\w.-]+)+)$/.exec(run)?.[1]?.trim().split(' ')
      assert.ok(testArgs, `${name(block)}: ${run}`)
      const dir = mkdtempSync(join(repoRoot, '.doc-client-'))
      try {
        for (const file of blocks.filter((other) => other.file === block.file && fileName(other))) {
          writeFileSync(join(dir, fileName(file) as string), file.code)
        }
        const runtime = { ...NODE_TSX, cwd: dir }
        const args = [...serve.split(' ').slice(1), '--port', '0']
        const server = await startScript(join(repoRoot, 'bin/petstore-server.ts'), args, {}, runtime)
        try {
          const tests = { ...runtime, args: [...NODE_TSX.args, '--test'] }
          const [first = '', ...rest] = testArgs
          const { code, stdout, stderr } = await runScriptToExit(first, rest, { PETSTORE_ORIGIN: server.origin }, tests)
          assert.equal(code, 0, `${testArgs.join(' ')} exited ${code}:\n${stdout}${stderr}`)
        } finally {
          await server.stop()
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }
})
