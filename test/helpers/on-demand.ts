/**
 * The runtimes only some tests need, fetched on first use rather than by
 * every `npm install`: Bun, Deno, and miniflare with its workerd. Each is an
 * npm package pinned here, installed once with `npm install --prefix` into
 * `<cache>/<package>@<version>` and reused by every later test run.
 *
 * The cache is `$PETSTORE_TEST_CACHE`, else `$XDG_CACHE_HOME/petstore-server`,
 * else `~/.cache/petstore-server`: outside the clone, so `npm ci` keeps it.
 * Fill it ahead of the tests (`.ci/run` does) with:
 *
 *   node --import tsx test/helpers/on-demand.ts
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

/** Each package fetched on demand: the version the tests run, and whether its install scripts run. */
export const ON_DEMAND = {
  // Their install scripts link the platform's binary in place of a stub.
  bun: { version: '1.4.5', scripts: true },
  deno: { version: '2.9.5', scripts: true },
  // As package.json's allowScripts had it: workerd's and sharp's scripts stay off; miniflare runs without them.
  miniflare: { version: '4.20260426.0', scripts: false },
} as const

export type OnDemandName = keyof typeof ON_DEMAND

/** Where a package is installed (a prefix holding its node_modules), or why it is not. */
export type Fetched = { prefix: string } | { skip: string }

/** The directory that holds one prefix per package and version. */
export const cacheRoot =
  process.env.PETSTORE_TEST_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'petstore-server')

/** `name@version`, as npm installs it. */
export function pinned(name: OnDemandName): string {
  return `${name}@${ON_DEMAND[name].version}`
}

const fetching = new Map<OnDemandName, Promise<Fetched>>()

/** Installs `name` into the cache unless it is there already; once per process. */
export function fetchOnDemand(name: OnDemandName): Promise<Fetched> {
  let fetched = fetching.get(name)
  if (!fetched) {
    fetched = install(name)
    fetching.set(name, fetched)
  }
  return fetched
}

/** The path of the binary `bin` that `name` (or one of its dependencies) installs. */
export function binaryIn(prefix: string, bin: string): string {
  return join(prefix, 'node_modules', '.bin', bin)
}

/** Imports `name` from its prefix, as `import(name)` would from a project that depends on it. */
export async function importFrom<Module>(prefix: string, name: OnDemandName): Promise<Module> {
  const entry = createRequire(join(prefix, 'package.json')).resolve(name)
  return (await import(pathToFileURL(entry).href)) as Module
}

async function install(name: OnDemandName): Promise<Fetched> {
  const prefix = join(cacheRoot, pinned(name))
  if (existsSync(join(prefix, 'node_modules', name, 'package.json'))) return { prefix }
  mkdirSync(cacheRoot, { recursive: true })
  // Installed beside it, then renamed: a test file that looks meanwhile never finds half an install.
  const partial = mkdtempSync(join(cacheRoot, `.${pinned(name)}-`))
  try {
    const args = ['install', '--prefix', partial, '--save-exact', '--no-audit', '--no-fund', pinned(name)]
    // npm's own retries, with shorter pauses between them: offline, the tests skip without a long wait.
    args.push('--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=4000')
    if (!ON_DEMAND[name].scripts) args.push('--ignore-scripts')
    await promisify(execFile)('npm', args, { cwd: partial, timeout: 10 * 60_000 })
    try {
      renameSync(partial, prefix)
    } catch (error) {
      // Another test process installed it first.
      if (!existsSync(prefix)) throw error
    }
    return { prefix }
  } catch (error) {
    const lines = ((error as { stderr?: string }).stderr || (error as Error).message)
      .split('\n')
      .map((line) => line.replace(/^npm error (network )?/, '').trim())
      .filter(Boolean)
    // npm's line that names the request and what failed, if it wrote one.
    const reason = lines.find((line) => / failed|\b404\b/.test(line)) ?? lines[0]
    return {
      skip:
        `${pinned(name)} is installed on first use, and npm could not install it into ${prefix} (offline?): ` +
        `${reason}. Online, run: node --import tsx test/helpers/on-demand.ts`,
    }
  } finally {
    rmSync(partial, { recursive: true, force: true })
  }
}

// Run as a script: fill the cache with every package, and say where each is.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const names = Object.keys(ON_DEMAND) as OnDemandName[]
  const fetched = await Promise.all(names.map(fetchOnDemand))
  names.forEach((name, index) => {
    const found = fetched[index]!
    if ('skip' in found) {
      console.error(found.skip)
      process.exitCode = 1
    } else console.log(`${pinned(name)}: ${found.prefix}`)
  })
}
