// The runtimes section of the benchmark: the same API on Bun and Deno (the
// programs of examples/, memory store, each runtime's own server: Bun.serve,
// Deno.serve) beside our binary on Node, under the same scenarios and rounds
// as the stores (bench/run.ts runs them; ratios are against the binary).
//
//   npm run bench -- --only runtimes
//
// Bun and Deno are the devDependencies' binaries (or $PETSTORE_TEST_BUN /
// $PETSTORE_TEST_DENO); one that is missing is skipped with the reason. They
// run the sources (tsconfig's paths; an import map for Deno), as the test
// suite's runtime matrix does.
import { bunRuntime, denoRuntime, locate } from '../test/helpers/runtimes.js'

export interface RuntimeServer {
  name: string
  version: string
  command: string[]
  env: Record<string, string>
}

/** Bun and Deno, each running its example with `key` on a free port; what cannot run is in `skipped`. */
export async function runtimeServers(key: string): Promise<{ servers: RuntimeServer[]; skipped: string[] }> {
  const servers: RuntimeServer[] = []
  const skipped: string[] = []
  for (const name of ['bun', 'deno'] as const) {
    const found = await locate(name)
    if ('skip' in found) {
      skipped.push(`runtimes: ${name} skipped: ${found.skip}`)
      continue
    }
    const runtime =
      name === 'bun' ? bunRuntime(found.binary) : denoRuntime(found.binary, ['--allow-net', '--allow-env'])
    servers.push({
      name,
      version: found.version,
      command: [runtime.command, ...runtime.args, `examples/${name}.ts`],
      env: { ...runtime.env, PORT: '0', PETSTORE_API_KEYS: key },
    })
  }
  return { servers, skipped }
}
