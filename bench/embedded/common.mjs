// What the embedded-path servers share: our fetch handler as a user builds it,
// imported from the BUILT package (`petstore-server`, i.e. dist/: run
// `npm run build` first), on the store the binary would open for the same
// `--db` (bin/open-store.ts: group commit on unless PETSTORE_BATCH_CREATES=0).
//
//   node bench/embedded/<mount>.mjs --port 0 --key KEY --db memory|sqlite:PATH|postgres://…[?schema=S]|mysql://… [--cursor-secret S]
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { createPetstore, memoryStore } from 'petstore-server'

async function openStore(db) {
  if (db === 'memory') return memoryStore()
  const batchCreates = process.env.PETSTORE_BATCH_CREATES !== '0'
  if (db.startsWith('sqlite:')) {
    const { sqliteStore } = await import('petstore-server/sqlite')
    return sqliteStore({ path: db.slice('sqlite:'.length), batchCreates })
  }
  if (/^postgres(ql)?:\/\//.test(db)) {
    const { postgresStore } = await import('petstore-server/postgres')
    const url = new URL(db)
    const schema = url.searchParams.get('schema')
    url.searchParams.delete('schema')
    return postgresStore({ connectionString: url.href }, { schema: schema || undefined, batchCreates })
  }
  if (db.startsWith('mysql://')) {
    const { mysqlStore } = await import('petstore-server/mysql')
    return mysqlStore({ uri: db }, { batchCreates })
  }
  throw new Error('--db must be memory, sqlite:PATH, postgres://… or mysql://…')
}

/** The command line, and the handler built on it: `{ port, handler, store }`. */
export async function embeddedHandler() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      db: { type: 'string', default: 'memory' },
      key: { type: 'string' },
      'cursor-secret': { type: 'string' },
    },
  })
  if (!values.key) throw new Error('--key is required')
  const store = await openStore(values.db)
  const cursorSecret =
    values['cursor-secret'] || process.env.PETSTORE_CURSOR_SECRET || randomBytes(32).toString('base64url')
  const handler = createPetstore({ store, keys: [values.key], cursorSecret })
  return { port: Number(values.port), handler, store }
}

// The ready line, SIGTERM handling and start-up are the peers' own: the bench drives both alike.
export { announce, exitOnSigterm, run } from '../peers/common.mjs'
