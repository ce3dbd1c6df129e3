// The command line every competitor server shares (baseline, Fastify, Hono):
//
//   tsx bench/<name>-server.ts --port 0 --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… --key KEY
//
// and the ready line bench/server-process.ts waits for: one line containing
// http://127.0.0.1:PORT/v1 once listening.
import { parseArgs } from 'node:util'
import { openStore, type Store } from './baseline-stores.js'

export interface CompetitorOptions {
  port: number
  key: string
  store: Store
}

/** Reads the arguments and opens the store, its pets in `table` (each competitor has its own). */
export async function competitorOptions(table: string): Promise<CompetitorOptions> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      db: { type: 'string', default: 'memory' },
      key: { type: 'string' },
    },
  })
  if (values.key === undefined || values.key === '') throw new Error('--key is required')
  return { port: Number(values.port), key: values.key, store: await openStore(values.db, table) }
}

export function announce(name: string, port: number): void {
  console.log(`${name} listening on http://127.0.0.1:${port}/v1`)
}

/**
 * On SIGTERM (how the benchmark stops a server): stop the server, close the
 * store, exit. No graceful drain: the load generator is idle by then, and its
 * keep-alive sockets would only hold the exit up.
 */
export function exitOnSigterm(stopServer: () => void, store: Store): void {
  process.once('SIGTERM', () => {
    stopServer()
    Promise.resolve()
      .then(() => store.close())
      .finally(() => process.exit(0))
  })
}

/** Runs `main`, exiting 1 with the error on stderr should it fail. */
export function run(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
