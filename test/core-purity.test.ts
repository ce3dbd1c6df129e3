/**
 * The core runs on any runtime with web standards: nothing in src/ may name a
 * Node module or a runtime global. Drivers are loaded lazily (see the one exception below).
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
  // Comments may sit inside import() (bundler hints such as webpackIgnore).
  [/import\(\s*(\/\*(?:(?!\*\/)[\s\S])*\*\/\s*)*['"]node:/, 'a dynamic node: import'],
  [/require\(/, 'require()'],
  [/\bprocess\./, 'process'],
  [/\bBuffer\b/, 'Buffer'],
  [/\b(Bun|Deno)\./, 'a runtime global'],
  [/\b__dirname\b|\b__filename\b/, 'a CommonJS global'],
]

/**
 * The one exception: the SQLite driver module may import the runtimes' own
 * SQLite modules, dynamically only (a static import would fail to load on
 * every other runtime). Those imports are cut out before the usual rules run
 * on the rest of the file, so any other node: import there is still caught.
 */
const DRIVERS_FILE = join('store', 'sql', 'sqlite-drivers.ts')
const DRIVER_IMPORT = /import\(\s*(\/\*(?:(?!\*\/)[\s\S])*\*\/\s*)*'(node|bun):sqlite'(\s+as\s+string)?\s*\)/g

/** The rules `text`, the content of `file` (relative to src/), breaks. */
function violations(file: string, text: string): string[] {
  const checked = file === DRIVERS_FILE ? text.replace(DRIVER_IMPORT, '') : text
  return forbidden.filter(([pattern]) => pattern.test(checked)).map(([, what]) => `${file}: ${what}`)
}

it('src/ holds only web-standard code', () => {
  assert.ok(files.length >= 10, 'the scan found the sources')
  const found = files.flatMap((file) => violations(relative(src, file), readFileSync(file, 'utf8')))
  assert.deepEqual(found, [])
})

it('the check catches what it looks for', () => {
  const sample = "import { readFile } from 'node:fs'\nprocess.exit(1)"
  assert.ok(forbidden.some(([pattern]) => pattern.test(sample)))
})

it('the driver exception is that narrow', () => {
  const dynamic = "const { DatabaseSync } = await import(/* webpackIgnore: true */ 'node:sqlite' as string)"
  assert.deepEqual(violations(DRIVERS_FILE, dynamic), [])
  assert.deepEqual(violations(DRIVERS_FILE, "await import('bun:sqlite')"), [])
  // Elsewhere the same import is still forbidden,
  assert.deepEqual(violations(join('store', 'sql', 'sqlite.ts'), dynamic), [
    `${join('store', 'sql', 'sqlite.ts')}: a dynamic node: import`,
  ])
  // and in the driver file every other rule still holds.
  assert.deepEqual(violations(DRIVERS_FILE, "import { DatabaseSync } from 'node:sqlite'"), [
    `${DRIVERS_FILE}: a node: import`,
  ])
  assert.deepEqual(violations(DRIVERS_FILE, "await import('node:fs')"), [`${DRIVERS_FILE}: a dynamic node: import`])
  const sneaky = "await import(/* a */ 'node:fs'); f(/* b */ 'node:sqlite')"
  assert.deepEqual(violations(DRIVERS_FILE, sneaky), [`${DRIVERS_FILE}: a dynamic node: import`])
  assert.deepEqual(violations(DRIVERS_FILE, `${dynamic}\nprocess.env.X`), [`${DRIVERS_FILE}: process`])
  assert.ok(readFileSync(join(src, DRIVERS_FILE), 'utf8').match(DRIVER_IMPORT), 'the exception still has a use')
})
