// The create-scale scenario: POST /v1/pets on the SQL stores at 1, 8, 50 and 64 connections, on
// one process and on `--workers 2`, with group commit on and off (PETSTORE_BATCH_CREATES=0), in
// the same run: issue 12's table.
//
//   npm run bench:create-scale -- [--only sqlite,postgres,mysql] [--connections 1,8,50,64]
//                                  [--workers 1,2] [--duration 5] [--rounds 2] [--json]
//
// Our binary as users run it (dist/bin/petstore-server.js: `npm run build` first), not pinned
// (two workers need both cores). Each round starts every server afresh, batching off and on in
// turn (the order swapped each round), so a change of load on the machine touches both alike;
// the table gives the mean of the rounds. PostgreSQL and MySQL from PETSTORE_BENCH_*_URL or
// PETSTORE_TEST_*_URL (else skipped), in a fresh schema / database dropped at the end, also on
// Ctrl-C; SQLite in a temp dir, a file per server.
//
// A measurement, not a test: on a shared machine numbers move; compare the ratios of one run.
import { rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { Cleanups } from './cleanups.js'
import { startServer } from './server-process.js'

const STORES = ['sqlite', 'postgres', 'mysql'] as const
type Store = (typeof STORES)[number]
const KEY = 'bench-create-scale-key'
const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
const URLS: Record<Exclude<Store, 'sqlite'>, string | undefined> = {
  postgres: process.env.PETSTORE_BENCH_POSTGRES_URL || process.env.PETSTORE_TEST_POSTGRES_URL,
  mysql: process.env.PETSTORE_BENCH_MYSQL_URL || process.env.PETSTORE_TEST_MYSQL_URL,
}

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: STORES.join(',') },
    connections: { type: 'string', default: '1,8,50,64' },
    workers: { type: 'string', default: '1,2' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
})
const numbers = (text: string) => text.split(',').map(Number)
const stores = values.only.split(',') as Store[]
const connections = numbers(values.connections)
const workerCounts = numbers(values.workers)
const duration = Number(values.duration)
const rounds = Number(values.rounds)
const log = (line: string) => process.stderr.write(`${line}\n`)
const cleanups = new Cleanups((line) => log(`create-scale: ${line}`))
cleanups.runOnSignals((signal) => log(`create-scale: ${signal}, cleaning up`))
const fresh = `petstore_cs_${Math.random().toString(36).slice(2, 10)}`

/** The --db of `store` for the server named `server`, after creating its schema, database or directory. */
async function prepare(store: Store): Promise<((server: string) => string) | undefined> {
  if (store === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'petstore-create-scale-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    return (server) => `sqlite:${join(dir, `${server}.db`)}`
  }
  const base = URLS[store]
  if (base === undefined) return undefined
  // A schema (PostgreSQL) or database (MySQL) per server, so each starts empty of the others' rows;
  // the store creates a schema itself, a database is created here (see ensureDatabase).
  const names: string[] = []
  const admin = async (statement: string) => {
    if (store === 'postgres') {
      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: base })
      await client.connect()
      await client.query(statement).finally(() => client.end())
    } else {
      const { createConnection } = await import('mysql2/promise')
      const connection = await createConnection({ uri: base })
      await connection.query(statement).finally(() => connection.end())
    }
  }
  cleanups.push(async () => {
    for (const name of names) {
      await admin(store === 'postgres' ? `drop schema if exists ${name} cascade` : `drop database if exists ${name}`)
    }
  })
  return (server) => {
    const name = `${fresh}_${server}`
    if (!names.includes(name)) names.push(name)
    if (store === 'postgres') return `${base}${base.includes('?') ? '&' : '?'}schema=${name}`
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.href
  }
}

/** Creates the MySQL database a server needs (its store creates schemas on PostgreSQL, not databases on MySQL). */
async function ensureDatabase(db: string): Promise<void> {
  if (!db.startsWith('mysql:')) return
  const url = new URL(db)
  const database = url.pathname.slice(1)
  url.pathname = '/'
  const { createConnection } = await import('mysql2/promise')
  const connection = await createConnection({ uri: url.href })
  await connection
    .query(`create database if not exists ${database} character set utf8mb4 collate utf8mb4_bin`)
    .finally(() => connection.end())
}

interface Row {
  store: Store
  workers: number
  connections: number
  batch: boolean
  reqPerSec: number[]
  p50Ms: number[]
  p99Ms: number[]
  non201: number
}

const rows = new Map<string, Row>()
function rowOf(store: Store, workers: number, connections: number, batch: boolean): Row {
  const key = `${store}/${workers}/${connections}/${batch}`
  let row = rows.get(key)
  if (row === undefined) {
    row = { store, workers, connections, batch, reqPerSec: [], p50Ms: [], p99Ms: [], non201: 0 }
    rows.set(key, row)
  }
  return row
}

async function measure(store: Store, db: (server: string) => string, workers: number, batch: boolean) {
  const name = `${batch ? 'on' : 'off'}_w${workers}`
  const target = db(name)
  await ensureDatabase(target)
  const command = [process.execPath, 'dist/bin/petstore-server.js', '--port', '0', '--key', KEY, '--db', target]
  if (workers > 1) command.push('--workers', String(workers))
  const server = await startServer(name, command, ROOT, { PETSTORE_BATCH_CREATES: batch ? '1' : '0' })
  try {
    for (const count of connections) {
      const result = await autocannon({
        url: `${server.baseUrl}/pets`,
        connections: count,
        duration,
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'create-scale', categoryId: 7, status: 'available' }),
      })
      const row = rowOf(store, workers, count, batch)
      row.reqPerSec.push(result.requests.average)
      row.p50Ms.push(result.latency.p50)
      row.p99Ms.push(result.latency.p99)
      row.non201 += result.requests.total - (result.statusCodeStats['201']?.count ?? 0) + result.errors
      log(
        `${store} workers=${workers} batch=${batch ? 'on' : 'off'} c=${count}: ${Math.round(result.requests.average)}/s p50 ${result.latency.p50} ms p99 ${result.latency.p99} ms`,
      )
    }
  } finally {
    await server.stop()
  }
}

const mean = (list: number[]) => list.reduce((sum, each) => sum + each, 0) / list.length

async function main() {
  for (const store of stores) {
    const db = await prepare(store)
    if (db === undefined) {
      log(`${store}: skipped, no server URL`)
      continue
    }
    for (let round = 0; round < rounds; round++) {
      for (const workers of workerCounts) {
        for (const batch of round % 2 === 0 ? [false, true] : [true, false]) await measure(store, db, workers, batch)
      }
    }
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify([...rows.values()], null, 2)}\n`)
    return
  }
  process.stdout.write(
    `create-scale: POST /v1/pets, ${duration} s × ${rounds} rounds, mean of rounds (shared machine: compare ratios)\n\n`,
  )
  process.stdout.write(
    '| store | workers | connections | off req/s | off p50/p99 ms | on req/s | on p50/p99 ms | on/off |\n|---|---|---|---|---|---|---|---|\n',
  )
  for (const off of rows.values()) {
    if (off.batch) continue
    const on = rowOf(off.store, off.workers, off.connections, true)
    const cell = (row: Row) => [
      Math.round(mean(row.reqPerSec)).toLocaleString('en'),
      `${mean(row.p50Ms)} / ${mean(row.p99Ms)}`,
    ]
    const errors = off.non201 + on.non201 > 0 ? ` (${off.non201}/${on.non201} not 201)` : ''
    process.stdout.write(
      `| ${off.store} | ${off.workers} | ${off.connections} | ${cell(off).join(' | ')} | ${cell(on).join(' | ')} | ${(mean(on.reqPerSec) / mean(off.reqPerSec)).toFixed(2)}×${errors} |\n`,
    )
  }
}

main()
  .catch((error) => {
    log(`create-scale: ${(error as Error).stack ?? error}`)
    process.exitCode = 1
  })
  .finally(() => cleanups.run())
