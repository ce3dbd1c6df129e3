/**
 * The binary while its database goes away and comes back: requests get a
 * quick 503, the process lives on, and it serves again by itself. The binary
 * reaches the server (PETSTORE_TEST_POSTGRES_URL, PETSTORE_TEST_MYSQL_URL)
 * through a TCP proxy the test cuts and restores.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { killAll, type RunningServer, runToExit, startServer } from './helpers/spawn-server.js'

const KEY = 'outage-key'
const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
/** How long a request may take to fail while the database is away. */
const QUICK_MS = 6000

after(() => killAll())

/** A TCP proxy to `target`: `down()` cuts every connection and stops listening, `up()` listens again on the same port. */
async function startProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>()
  let server: net.Server | undefined
  let port = 0
  const proxy = {
    get port() {
      return port
    },
    async up() {
      const listening = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('error', () => {}) // a cut connection errors; that is the point
          socket.on('close', () => {
            sockets.delete(socket)
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject)
        listening.listen(port, '127.0.0.1', resolve)
      })
      server = listening
      port = (listening.address() as net.AddressInfo).port
    },
    async down() {
      const closed = new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
      server = undefined
      for (const socket of sockets) socket.destroy()
      await closed
    },
  }
  await proxy.up()
  return proxy
}

interface Answer {
  status: number
  body: any
  ms: number
}

async function request(server: RunningServer, path: string, json?: unknown): Promise<Answer> {
  const started = performance.now()
  const response = await fetch(`${server.origin}${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${KEY}`, ...(json !== undefined && { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined, ms: performance.now() - started }
}

/** What a database needs for the scenario: a URL through the proxy to a fresh place, a table lock, cleanup. */
interface Database {
  /** The `--db` URL reaching the server at 127.0.0.1:`port`. */
  url(port: number): string
  /** Holds a lock that makes every read of the pets table wait; resolves with its release. */
  lock(): Promise<() => Promise<void>>
  drop(): Promise<void>
}

function postgres(base: URL): Database {
  const schema = `petstore_outage_${randomBytes(4).toString('hex')}`
  const admin = new pg.Pool({ connectionString: base.href, max: 2 })
  return {
    url(port) {
      const url = new URL(base.href)
      url.hostname = '127.0.0.1'
      url.port = String(port)
      url.searchParams.set('schema', schema)
      return url.href
    },
    async lock() {
      const client = await admin.connect()
      await client.query('begin')
      await client.query(`lock table ${schema}.petstore_pets in access exclusive mode`)
      return async () => {
        await client.query('rollback')
        client.release()
      }
    },
    async drop() {
      await admin.query(`drop schema if exists ${schema} cascade`)
      await admin.end()
    },
  }
}

async function mariadb(base: URL): Promise<Database> {
  const database = `petstore_outage_${randomBytes(4).toString('hex')}`
  const admin = mysql.createPool({ uri: base.href, connectionLimit: 2 })
  await admin.query(`create database ${database}`)
  return {
    url(port) {
      const url = new URL(base.href)
      url.hostname = '127.0.0.1'
      url.port = String(port)
      url.pathname = `/${database}`
      return url.href
    },
    async lock() {
      const connection = await admin.getConnection()
      await connection.query(`lock tables ${database}.petstore_pets write`)
      return async () => {
        await connection.query('unlock tables')
        connection.release()
      }
    },
    async drop() {
      await admin.query(`drop database if exists ${database}`)
      await admin.end()
    },
  }
}

async function outage(base: URL, database: Database): Promise<void> {
  const proxy = await startProxy({ host: base.hostname, port: Number(base.port) })
  let server: RunningServer | undefined
  try {
    server = await startServer(['--port', '0', '--key', KEY, '--db', database.url(proxy.port)])
    const rex = await request(server, '/v1/pets', { name: 'Rex', categoryId: 1 })
    assert.equal(rex.status, 201, JSON.stringify(rex.body))
    assert.equal((await request(server, '/healthz')).status, 200)

    // A request waiting on the database when the connection is cut fails, and the process lives on.
    const release = await database.lock()
    try {
      const waiting = request(server, '/v1/pets')
      await sleep(300)
      await proxy.down()
      const cut = await waiting
      assert.equal(cut.status, 503, JSON.stringify(cut.body))
    } finally {
      await release()
    }

    for (const [path, json] of [
      ['/v1/pets', undefined],
      ['/v1/pets', { name: 'Lost', categoryId: 2 }],
      [`/v1/pets/${rex.body.id}`, undefined],
      ['/healthz', undefined],
    ] as const) {
      const answer = await request(server, path, json)
      assert.equal(answer.status, 503, `${path}: ${JSON.stringify(answer.body)}`)
      assert.equal(answer.body.code, 'unavailable')
      assert.ok(answer.ms < QUICK_MS, `${path} took ${Math.round(answer.ms)} ms to fail`)
    }
    assert.equal(server.child.exitCode, null, 'still running')

    await proxy.up()
    const deadline = Date.now() + 10_000
    let back: Answer
    for (;;) {
      back = await request(server, '/v1/pets', { name: 'Back', categoryId: 3 })
      assert.ok(back.ms < QUICK_MS, `a request took ${Math.round(back.ms)} ms`)
      if (back.status === 201 || Date.now() > deadline) break
      await sleep(200)
    }
    assert.equal(back.status, 201, `not serving again 10 s after the database came back: ${JSON.stringify(back.body)}`)
    const list = await request(server, '/v1/pets')
    assert.deepEqual(
      list.body.map((pet: { name: string }) => pet.name),
      ['Rex', 'Back'],
    )
    assert.equal((await request(server, '/healthz')).status, 200)
    assert.doesNotMatch(server.stderr(), /Unhandled|uncaught|ERR_UNHANDLED/i)
    assert.deepEqual(await server.stop(), { code: 0, signal: null })
  } finally {
    await server?.stop('SIGKILL')
    await proxy.down()
    await database.drop()
  }
}

describe('the binary while its database goes away', () => {
  it('PostgreSQL: 503 within seconds, no crash, serving again once it is back', {
    skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
  }, async () => {
    const base = new URL(POSTGRES_URL ?? '')
    base.port ||= '5432'
    await outage(base, postgres(base))
  })

  it('MySQL/MariaDB: 503 within seconds, no crash, serving again once it is back', {
    skip: !MYSQL_URL && 'PETSTORE_TEST_MYSQL_URL not set',
  }, async () => {
    const base = new URL(MYSQL_URL ?? '')
    base.port ||= '3306'
    await outage(base, await mariadb(base))
  })

  it('PostgreSQL: a dropped database is a 503 on every path, as /healthz says', {
    skip: !POSTGRES_URL && 'PETSTORE_TEST_POSTGRES_URL not set',
  }, async () => {
    const name = `petstore_dropped_${randomBytes(4).toString('hex')}`
    const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 })
    await admin.query(`create database ${name}`)
    let server: RunningServer | undefined
    try {
      const url = new URL(POSTGRES_URL ?? '')
      url.pathname = `/${name}`
      server = await startServer(['--port', '0', '--key', KEY, '--db', url.href, '--test-control'])
      assert.equal((await request(server, '/v1/pets', { name: 'Rex', categoryId: 1 })).status, 201)
      await admin.query(`drop database ${name} with (force)`)
      for (const [path, json] of [
        ['/v1/pets', undefined],
        ['/v1/pets', { name: 'Lost', categoryId: 2 }],
        ['/v1/pets/1', undefined],
        ['/__petstore/reset', {}],
        ['/healthz', undefined],
      ] as const) {
        const answer = await request(server, path, json)
        assert.equal(answer.status, 503, `${path}: ${JSON.stringify(answer.body)}`)
        assert.equal(answer.body.code, 'unavailable')
      }
      assert.equal(server.child.exitCode, null, 'still running')
    } finally {
      await server?.stop('SIGKILL')
      await admin.query(`drop database if exists ${name} with (force)`)
      await admin.end()
    }
  })

  for (const url of ['postgres://u:secretpw@127.0.0.1:1/x', 'mysql://u:secretpw@127.0.0.1:1/x']) {
    it(`an unreachable ${url.split(':')[0]} at start: exit 1, one line on stderr, no password`, async () => {
      const run = await runToExit(['--port', '0', '--key', KEY, '--db', url])
      assert.equal(run.code, 1)
      assert.equal(run.stdout, '')
      assert.match(run.stderr, /^petstore-server: cannot use database .*ECONNREFUSED.*\n$/)
      assert.doesNotMatch(run.stderr, /secretpw/)
    })
  }
})
