/**
 * Bun and Deno for the runtime matrix (test/runtimes.test.ts): where their
 * binaries are, and how each runs this repository's TypeScript the way a
 * user's program runs against the published package.
 *
 * Binaries: `$PETSTORE_TEST_BUN` / `$PETSTORE_TEST_DENO` when set, else the
 * npm packages `bun` and `deno` at the versions test/helpers/on-demand.ts pins,
 * installed into its cache on first use. A runtime that cannot be had, or does
 * not start, is reported with the reason so its tests skip.
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { binaryIn, fetchOnDemand } from './on-demand.js'
import { repoRoot, type ScriptRuntime } from './spawn-server.js'

export type RuntimeName = 'bun' | 'deno'

/** A runtime's binary and version, or why it cannot be used here. */
export type Located = { binary: string; version: string } | { skip: string }

const ENV: Record<RuntimeName, string> = { bun: 'PETSTORE_TEST_BUN', deno: 'PETSTORE_TEST_DENO' }

/** Finds `name`'s binary, installing it on first use, and asks its version. */
export async function locate(name: RuntimeName): Promise<Located> {
  let binary = process.env[ENV[name]]
  if (!binary) {
    const fetched = await fetchOnDemand(name)
    if ('skip' in fetched) return { skip: `${fetched.skip}; or set ${ENV[name]} to a ${name} binary` }
    binary = binaryIn(fetched.prefix, name)
  }
  try {
    const { stdout } = await promisify(execFile)(binary, ['--version'], { timeout: 30_000 })
    // `1.4.5` from Bun, `deno 2.9.5 (stable, …)` and more lines from Deno.
    return { binary, version: /\d+\.\d+\.\d+\S*/.exec(stdout)?.[0] ?? stdout.trim() }
  } catch (error) {
    return { skip: `${binary} --version failed: ${(error as Error).message.split('\n')[0]}` }
  }
}

/**
 * Finds the binary `bin` of the npm package `pkg` (`node@22`, say) in npx's
 * cache, or at the path the variable `env` holds, and asks its version.
 * `npx --offline`: never downloads; warm the cache with `npx -y -p PKG BIN --version`.
 */
export async function locateNpx(pkg: string, bin: string, env: string): Promise<Located> {
  const run = promisify(execFile)
  try {
    const binary =
      process.env[env] ||
      (
        await run('npx', ['--offline', '-y', '-p', pkg, bin, '-e', 'console.log(process.execPath)'], {
          timeout: 30_000,
        })
      ).stdout
        .trim()
        .split('\n')
        .pop()!
    const { stdout } = await run(binary, ['--version'], { timeout: 30_000 })
    return { binary, version: stdout.trim() }
  } catch {
    const given = process.env[env]
    if (given) return { skip: `${env}=${given} does not run` }
    return { skip: `not in npx's cache: run npx -y -p ${pkg} ${bin} --version once, or set ${env}` }
  }
}

/** Bun runs TypeScript and resolves tsconfig's `paths` itself: `bun script.ts`. */
export function bunRuntime(binary: string): ScriptRuntime {
  return { command: binary, args: [] }
}

let importMap: string | undefined

/**
 * tsconfig's `paths` (what tsx and Bun read) as a standard import map, so
 * that `petstore-server/…` imports resolve to the sources. Written once per
 * test process, to a temporary file.
 */
function denoImportMap(): string {
  if (importMap) return importMap
  const tsconfig = JSON.parse(readFileSync(join(repoRoot, 'tsconfig.json'), 'utf8'))
  const paths: Record<string, string[]> = tsconfig.compilerOptions.paths
  const imports = Object.fromEntries(
    Object.entries(paths).map(([name, [target = '']]) => [name, pathToFileURL(join(repoRoot, target)).href]),
  )
  const dir = mkdtempSync(join(tmpdir(), 'petstore-deno-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  importMap = join(dir, 'import-map.json')
  writeFileSync(importMap, JSON.stringify({ imports }, null, 2))
  return importMap
}

/**
 * `deno run` with `permissions`, the import map of {@link denoImportMap}, and
 * sloppy imports: the sources import `./x.js` for `x.ts` (TypeScript's
 * NodeNext convention, which tsx, Bun and the build follow), and Deno resolves
 * that only when asked. A user's program imports the built package and needs
 * neither. npm packages come from node_modules, as Deno does beside a package.json.
 */
export function denoRuntime(binary: string, permissions: readonly string[]): ScriptRuntime {
  return {
    command: binary,
    args: ['run', ...permissions, '--sloppy-imports', `--import-map=${denoImportMap()}`],
    env: { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  }
}
