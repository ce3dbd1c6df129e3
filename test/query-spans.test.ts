/**
 * A child span per SQL query under the request's server span, recorded by the
 * SDK's in-memory exporter over real HTTP: SQLite files always (the hot path,
 * and a kyselyStore over an instance of one's own), PostgreSQL and MySQL or
 * MariaDB when PETSTORE_TEST_POSTGRES_URL / PETSTORE_TEST_MYSQL_URL are set.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { Kysely, SqliteDialect } from 'kysely'
import { serve } from '../adapters/node/index.js'
import { createPetstore, type PetStore } from '../src/index.js'
import { loadTracing } from '../src/shared/tracing.js'
import { kyselyStore } from '../src/store/sql/kysely.js'
import { mysqlStore } from '../src/store/sql/mysql.js'
import { postgresStore } from '../src/store/sql/postgres.js'
import { sqliteStore } from '../src/store/sql/sqlite.js'
import { loadSqliteDriver } from '../src/store/sql/sqlite-drivers.js'
import { createdTables } from '../src/store/sql/store-options.js'
import { KEY } from './helpers/client.js'

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const directory = mkdtempSync(join(tmpdir(), 'petstore-spans-'))
const run = randomBytes(4).toString('hex')
let count = 0
const freshName = () => `petstore_s_${run}_${count++}`

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(provider)
  await loadTracing()
})
after(() => {
  trace.disable()
  context.disable()
  rmSync(directory, { recursive: true, force: true })
})

const parentOf = (span: ReadableSpan) =>
  (span as ReadableSpan & { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ??
  (span as ReadableSpan & { parentSpanId?: string }).parentSpanId

/** A name no database would make up: if it shows in any span, a value leaked. */
const SECRET_NAME = `Leaky-${run}`

/**
 * Drives one create, one get, one page and a burst of creates (group commit)
 * over HTTP, after a warm-up that runs the migrations, and returns the spans
 * of that traffic by server span.
 */
async function trafficSpans(store: PetStore) {
  const handler = createPetstore({ store, keys: [KEY], onError: () => {} })
  const server = await serve({ handler, port: 0 })
  const base = `http://127.0.0.1:${server.port}/v1`
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
  const post = (name: string) =>
    fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name, categoryId: 7 }) }).then(
      async (response) => ({ status: response.status, body: (await response.json()) as { id: number } }),
    )
  try {
    await (await fetch(`${base}/pets?limit=1`, { headers })).arrayBuffer()
    exporter.reset()
    const created = await post(SECRET_NAME)
    assert.equal(created.status, 201)
    const got = await fetch(`${base}/pets/${created.body.id}`, { headers })
    assert.equal(got.status, 200)
    await got.arrayBuffer()
    const page = await fetch(`${base}/pets?limit=5&status=available`, { headers })
    assert.equal(page.status, 200)
    await page.arrayBuffer()
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`${SECRET_NAME}-${i}`)))
    assert.deepEqual(
      burst.map((answer) => answer.status),
      Array(8).fill(201),
    )
  } finally {
    await server.close()
    await store.close?.()
  }
  const spans = exporter.getFinishedSpans()
  const servers = spans.filter((span) => span.kind === SpanKind.SERVER)
  const queries = spans.filter((span) => span.attributes['db.system'] !== undefined)
  const childrenOf = (server: ReadableSpan | undefined) =>
    queries.filter((query) => parentOf(query) === server?.spanContext().spanId)
  return { spans, servers, queries, childrenOf }
}

/** The checks every SQL store passes: names, attributes, links, and no value anywhere. */
function assertQuerySpans(traffic: Awaited<ReturnType<typeof trafficSpans>>, system: RegExp, table: string) {
  const { spans, servers, queries, childrenOf } = traffic
  assert.ok(queries.length >= 4, `query spans were recorded (${queries.length})`)
  const serverIds = new Map(servers.map((server) => [server.spanContext().spanId, server]))
  for (const query of queries) {
    assert.equal(query.kind, SpanKind.CLIENT)
    assert.match(String(query.attributes['db.system']), system)
    const parent = serverIds.get(parentOf(query) ?? '')
    assert.ok(parent, `${query.name} is the child of a request's server span`)
    assert.equal(query.spanContext().traceId, parent.spanContext().traceId, 'in the request’s trace')
    const operation = query.attributes['db.operation.name']
    assert.match(String(operation), /^[A-Z]+$/)
    if (query.attributes['db.collection.name'] !== undefined) {
      assert.equal(query.attributes['db.collection.name'], table)
      assert.equal(query.name, `${operation} ${table}`)
    } else assert.equal(query.name, operation)
  }
  const [create, get, page] = servers
  assert.equal(create?.name, 'POST /v1/pets')
  assert.ok(
    childrenOf(create).some((query) => query.name === `INSERT ${table}`),
    `the create's spans: ${childrenOf(create).map((query) => query.name)}`,
  )
  assert.equal(get?.name, 'GET /v1/pets/{petId}')
  assert.deepEqual(
    childrenOf(get).map((query) => [query.name, query.attributes['db.operation.name']]),
    [[`SELECT ${table}`, 'SELECT']],
  )
  assert.deepEqual(
    childrenOf(page).map((query) => query.name),
    [`SELECT ${table}`],
  )
  // Every create of the burst has a server span; the batches' statements hang under one of them each.
  assert.equal(servers.length, 3 + 8)
  assert.ok(queries.filter((query) => query.name === `INSERT ${table}`).length >= 2)
  for (const span of spans) {
    for (const [name, value] of Object.entries(span.attributes)) {
      assert.ok(!String(value).includes(SECRET_NAME), `${span.name} ${name} holds no pet name`)
      assert.ok(!String(value).includes(KEY), `${span.name} ${name} holds no key`)
    }
  }
}

describe('query spans', () => {
  it('sqliteStore: a span per statement of the hot path, under the request', async () => {
    const table = freshName()
    const traffic = await trafficSpans(sqliteStore({ path: join(directory, `${table}.db`), table }))
    // A batch of creates, when the burst makes one, is one immediate transaction: its begin and commit are spans too.
    assertQuerySpans(traffic, /^sqlite$/, table)
    // The page of 5 reads 6 pets, that limit written in: a bound `limit ?` had SQLite prepare the page anew at every run.
    const [page] = traffic.childrenOf(traffic.servers[2])
    assert.match(String(page?.attributes['db.query.text']), / limit 6\)$/)
  })

  it('kyselyStore over an instance of one’s own: a span per query through the plugin', async () => {
    const table = freshName()
    const db = new Kysely<any>({
      // The runtime's own SQLite driver: on Node 22 and 24, better-sqlite3's addon (built for Node 20) cannot load.
      dialect: new SqliteDialect({ database: (await loadSqliteDriver()).open(join(directory, `${table}.db`)) }),
    })
    const traffic = await trafficSpans(kyselyStore(db, { table, destroyOnClose: true }))
    assertQuerySpans(traffic, /^sqlite$/, table)
  })

  it('makes no query span outside a request, and none without a recording server span', async () => {
    exporter.reset()
    const table = freshName()
    const store = sqliteStore({ path: join(directory, `${table}.db`), table })
    try {
      await store.create({ name: SECRET_NAME, categoryId: 1 })
      await store.list({ limit: 5 })
    } finally {
      await store.close?.()
    }
    assert.deepEqual(exporter.getFinishedSpans(), [])
  })

  it('traces from the moment an SDK is registered: none before, server and query spans after', async () => {
    const table = freshName()
    const store = sqliteStore({ path: join(directory, `${table}.db`), table })
    const handler = createPetstore({ store, keys: [KEY] })
    const server = await serve({ handler, port: 0 })
    const headers = { authorization: `Bearer ${KEY}` }
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${server.port}/v1${path}`, { headers })
      await response.arrayBuffer()
      return response.status
    }
    try {
      // The API stays loaded; only the provider behind its global proxy goes.
      trace.disable()
      exporter.reset()
      assert.deepEqual([await get('/pets?limit=3'), await get('/pets/1')], [200, 404])
      assert.deepEqual(exporter.getFinishedSpans(), [], 'no SDK: nothing recorded')
      assert.ok(trace.setGlobalTracerProvider(provider), 'the SDK registers again')
      assert.deepEqual([await get('/pets?limit=3'), await get('/pets/1')], [200, 404])
      const spans = exporter.getFinishedSpans()
      assert.deepEqual(
        spans.filter((span) => span.kind === SpanKind.SERVER).map((span) => span.name),
        ['GET /v1/pets', 'GET /v1/pets/{petId}'],
      )
      assert.deepEqual(
        spans.filter((span) => span.kind === SpanKind.CLIENT).map((span) => span.name),
        [`SELECT ${table}`, `SELECT ${table}`],
      )
    } finally {
      // The SDK registered afresh whatever failed above, so that the tests after this one keep it.
      trace.disable()
      trace.setGlobalTracerProvider(provider)
      await server.close()
      await store.close?.()
    }
  })

  it('postgresStore: spans say postgresql', {
    skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
  }, async () => {
    const schema = freshName()
    const store = postgresStore({ connectionString: POSTGRES_URL ?? '' }, { schema })
    try {
      assertQuerySpans(await trafficSpans(store), /^postgresql$/, 'petstore_pets')
    } finally {
      const { default: pg } = await import('pg')
      const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 })
      await admin.query(`drop schema if exists ${schema} cascade`)
      await admin.end()
    }
  })

  it('mysqlStore: spans say mysql or mariadb, as the server is', {
    skip: !MYSQL_URL && 'PETSTORE_TEST_MYSQL_URL not set',
  }, async () => {
    const table = freshName()
    const store = mysqlStore({ uri: MYSQL_URL ?? '' }, { table })
    const { default: mysql } = await import('mysql2')
    const admin = mysql.createPool({ uri: MYSQL_URL ?? '', connectionLimit: 1 }).promise()
    try {
      const [rows] = (await admin.query('select version() as version')) as unknown as [Array<{ version: string }>]
      const system = /mariadb/i.test(rows[0]?.version ?? '') ? /^mariadb$/ : /^mysql$/
      assertQuerySpans(await trafficSpans(store), system, table)
    } finally {
      await admin.query(`drop table if exists ${createdTables(table, `${table}_migration`).join(', ')}`)
      await admin.end()
    }
  })
})
