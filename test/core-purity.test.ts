/**
 * The core runs on any runtime with web standards: nothing in src/ may name a
 * Node module or a runtime global. Drivers (better-sqlite3) are loaded lazily.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'

const src = fileURLToPath(new URL('../src', import.meta.url))
const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => join(src, file))

const forbidden: Array<[RegExp, string]> = [
  [/from\s+['"]node:/, 'a node: import'],
  [/import\(\s*['"]node:/, 'a dynamic node: import'],
  [/require\(/, 'require()'],
  [/\bprocess\./, 'process'],
  [/\bBuffer\b/, 'Buffer'],
  [/\b(Bun|Deno)\./, 'a runtime global'],
  [/\b__dirname\b|\b__filename\b/, 'a CommonJS global'],
]

it('src/ holds only web-standard code', () => {
  assert.ok(files.length >= 10, 'the scan found the sources')
  const found: string[] = []
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const [pattern, what] of forbidden) {
      if (pattern.test(text)) found.push(`${relative(src, file)}: ${what}`)
    }
  }
  assert.deepEqual(found, [])
})

it('the check catches what it looks for', () => {
  const sample = "import { readFile } from 'node:fs'\nprocess.exit(1)"
  assert.ok(forbidden.some(([pattern]) => pattern.test(sample)))
})
