/**
 * The package as a user gets it: dist/ packed by `npm pack`, for tests that install the
 * tarball into an empty project (test/package.test.ts, test/readme-embed.test.ts).
 *
 * @module
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { repoRoot } from './spawn-server.js'

const run = promisify(execFile)

/**
 * Packs dist/ as it is into `dir` and resolves with the tarball's path. Run `npm run build`
 * first (CI does): `--ignore-scripts` skips the `prepare` build.
 */
export async function packTarball(dir: string): Promise<string> {
  assert.ok(existsSync(join(repoRoot, 'dist/bin/petstore-server.js')), 'no dist/: run npm run build first')
  await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], { cwd: repoRoot })
  const [tarball] = readdirSync(dir).filter((name) => name.endsWith('.tgz'))
  assert.ok(tarball, 'npm pack wrote no tarball')
  return join(dir, tarball)
}

/**
 * The flags every install of the tarball takes: dependencies' tarballs from npm's cache
 * (which `npm ci` fills; `--offline` fails on a fresh machine, whose cache holds no registry
 * metadata to resolve version ranges with), and no audit or funding requests.
 */
export const OFFLINE_INSTALL = ['--prefer-offline', '--no-audit', '--no-fund']
