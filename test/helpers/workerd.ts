/**
 * Cloudflare Workers for the tests and the benchmark: the example Worker and
 * the conformance Worker bundled from TypeScript with esbuild (as wrangler
 * bundles them), and started on workerd by miniflare with a local D1, on a
 * free port of 127.0.0.1. miniflare, and workerd with it, is installed on
 * first use at its pinned version (test/helpers/on-demand.ts). Once it is
 * there, nothing leaves the machine: D1 is simulated in memory.
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import type { Metafile } from 'esbuild'
import { binaryIn, fetchOnDemand, importFrom } from './on-demand.js'
import { repoRoot } from './spawn-server.js'

/** The wrangler configuration of the example, which a user copies. */
export const WRANGLER_CONFIG = 'examples/cloudflare/wrangler.jsonc'

/** The fields of wrangler.jsonc the tests start the Worker with. */
export interface WranglerConfig {
  name: string
  main: string
  compatibility_date: string
  d1_databases: Array<{ binding: string; database_name: string }>
}

/** wrangler.jsonc, read as wrangler reads it: JSON with `//` comments (none inside strings here). */
export function wranglerConfig(): WranglerConfig {
  const text = readFileSync(join(repoRoot, WRANGLER_CONFIG), 'utf8').replace(/^\s*\/\/.*$/gm, '')
  return JSON.parse(text)
}

/** The example Worker's entry, resolved from wrangler.jsonc's `main`. */
export function exampleEntry(): string {
  return join(repoRoot, dirname(WRANGLER_CONFIG), wranglerConfig().main)
}

/** A Worker bundled as wrangler deploys one: one ES module, minified. */
export interface WorkerBundle {
  code: string
  metafile: Metafile
  bytes: number
  gzipBytes: number
}

/**
 * Bundles `entry` for workerd: esbuild with the conditions wrangler uses
 * (`workerd`, `worker`, `browser`), `petstore-server/…` resolved to the
 * sources through tsconfig.json's `paths`.
 */
export async function bundleWorker(entry: string): Promise<WorkerBundle> {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: repoRoot,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: true,
    metafile: true,
    write: false,
    logLevel: 'silent',
  })
  const code = result.outputFiles[0]?.text ?? ''
  return {
    code,
    metafile: result.metafile,
    bytes: Buffer.byteLength(code),
    gzipBytes: gzipSync(code).length,
  }
}

/**
 * The few members of miniflare's API used here, declared rather than imported:
 * miniflare is not a devDependency, so tsc has no types of it to read.
 */
export interface Miniflare {
  /** The URL the first Worker answers on, once workerd listens. */
  readonly ready: Promise<URL>
  /** A Worker, called past the port. Its fetch uses workers-types' Request and Response, alike here. */
  getWorker(name: string): Promise<{ fetch(url: string, init?: RequestInit): Promise<Response> }>
  dispose(): Promise<void>
}

interface MiniflareModule {
  Miniflare: new (options: {
    host: string
    port: number
    workers: Array<{
      name: string
      modules: Array<{ type: 'ESModule'; path: string; contents: string }>
      compatibilityDate: string
      d1Databases: Record<string, string>
      bindings: Record<string, string>
    }>
  }) => Miniflare
}

/** miniflare, installed on first use. */
async function miniflareModule(): Promise<MiniflareModule> {
  const fetched = await fetchOnDemand('miniflare')
  if ('skip' in fetched) throw new Error(fetched.skip)
  return importFrom<MiniflareModule>(fetched.prefix, 'miniflare')
}

/** workerd's version, installing miniflare (and workerd with it) on first use, or why it cannot run here. */
export async function locateWorkerd(): Promise<{ version: string } | { skip: string }> {
  const fetched = await fetchOnDemand('miniflare')
  if ('skip' in fetched) return fetched
  try {
    const { stdout } = await promisify(execFile)(binaryIn(fetched.prefix, 'workerd'), ['--version'], {
      timeout: 30_000,
    })
    await importFrom(fetched.prefix, 'miniflare')
    return { version: stdout.trim().replace(/^workerd /, '') }
  } catch (error) {
    return { skip: `workerd or miniflare not usable in ${fetched.prefix}: ${(error as Error).message.split('\n')[0]}` }
  }
}

/** One Worker to start: its bundled code, D1 bindings, plain-text bindings. */
export interface WorkerToStart {
  name: string
  code: string
  d1Databases?: Record<string, string>
  bindings?: Record<string, string>
}

/** Miniflare serving the first Worker on `url`, and how long workerd took to be ready. */
export interface RunningWorkers {
  miniflare: Miniflare
  url: URL
  startMs: number
}

/**
 * Starts `workers` on one workerd process (miniflare) on a free port of
 * 127.0.0.1; the first one answers on `url`, the others through
 * `miniflare.getWorker(name)`. D1 lives in memory and goes with `dispose()`.
 */
export async function startWorkers(workers: WorkerToStart[], compatibilityDate: string): Promise<RunningWorkers> {
  const { Miniflare } = await miniflareModule()
  const started = performance.now()
  const miniflare = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    workers: workers.map(({ name, code, d1Databases = {}, bindings = {} }) => ({
      name,
      // The bundle as one module, listed as wrangler lists its output: given as `script`, miniflare would
      // scan it and refuse the core's `import(variable)` of the optional @opentelemetry/api (see
      // src/shared/tracing.ts), which workerd itself rejects at run time, leaving requests untraced.
      modules: [{ type: 'ESModule', path: `${name}.mjs`, contents: code }],
      compatibilityDate,
      d1Databases,
      bindings,
    })),
  })
  let url: URL
  try {
    url = await miniflare.ready
  } catch (error) {
    // workerd may already run: left alive, it keeps the test process from ever exiting.
    await miniflare.dispose().catch(() => {})
    throw error
  }
  return { miniflare, url, startMs: performance.now() - started }
}

/** Sends a GET for `path` to the Worker `name` of `running`, past the port (miniflare's own route to it). */
export async function fetchWorker(running: RunningWorkers, name: string, path: string): Promise<Response> {
  const worker = await running.miniflare.getWorker(name)
  return worker.fetch(`http://${name}${path}`)
}
