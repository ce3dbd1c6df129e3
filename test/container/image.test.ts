/**
 * The container image (Dockerfile), run as a container runtime would run it: its own entrypoint,
 * user and environment from its configuration, a host directory as its /data volume, SIGTERM
 * to stop. `.ci/container` builds the image and runs this file with PETSTORE_TEST_IMAGE naming
 * it; elsewhere it skips, and fails under CI.
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import mysql from 'mysql2/promise'
import pg from 'pg'
import {
  bindOverVolumes,
  buildah,
  buildahMissing,
  descendantRunning,
  type ImageConfig,
  imageConfig,
  killTree,
  newContainer,
  removeContainers,
  runIn,
  startCommand,
  uidOf,
} from '../helpers/buildah.js'
import { underCi } from '../helpers/ci.js'

const IMAGE = process.env.PETSTORE_TEST_IMAGE
const skip = IMAGE
  ? await buildahMissing()
  : 'PETSTORE_TEST_IMAGE names no image: .ci/container builds the image and runs this test'
if (skip && underCi) throw new Error(`the container test cannot run under CI: ${skip}`)

const POSTGRES_URL = process.env.PETSTORE_TEST_POSTGRES_URL
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
/** The server databases' test runs keep to this schema (PostgreSQL) or database (MySQL), dropped after. */
const OWN = 'petstore_container_test'

const KEY = 'container-test-key'
const AUTH = { authorization: `Bearer ${KEY}` }
// Generous: buildah sets up each run, and CI's 2 cores are shared.
const READY_TIMEOUT_MS = 60_000
const EXIT_TIMEOUT_MS = 20_000

/** The image's process, started from its configuration. */
interface Started {
  child: ChildProcess
  /** The container's own process (node), which SIGTERM goes to. */
  pid: number
  origin: string
  /** The host of the ready line: the address it bound. */
  host: string
  stderr(): string
  exited: Promise<number | null>
}

/** Every buildah run started, killed by the `after` hook if still running. */
const children = new Set<ChildProcess>()

/** A port free on the host now: the container shares the host's network. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/** Runs the image's entrypoint and command in a new container; resolves once it is ready. */
async function start(config: ImageConfig, env: Record<string, string>, volumes: string[]): Promise<Started> {
  const command = startCommand(config)
  const container = await newContainer(IMAGE as string)
  await bindOverVolumes(container, volumes)
  const child = runIn(container, command, { env, volumes })
  children.add(child)
  let out = ''
  let err = ''
  child.stderr?.on('data', (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const ready = new Promise<{ host: string; port: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready line within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    )
    child.stdout?.on('data', (chunk: string) => {
      out += chunk
      const match = /listening on http:\/\/([^\s/]+):(\d+)\//.exec(out)
      if (!match) return
      clearTimeout(timer)
      resolve({ host: match[1] as string, port: match[2] as string })
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`exited with code ${code} before it was ready`))
    })
  }).catch((error: Error) => {
    killTree(child.pid as number)
    throw new Error(`${command.join(' ')}: ${error.message}\nstdout: ${out}\nstderr: ${err}`)
  })
  const { host, port } = await ready
  const pid = descendantRunning(child.pid as number, command)
  if (pid === undefined) {
    killTree(child.pid as number)
    assert.fail(`no process runs ${JSON.stringify(command)} under buildah`)
  }
  return { child, pid, origin: `http://127.0.0.1:${port}`, host, stderr: () => err, exited }
}

/** SIGTERM to the container's process, as `docker stop` sends it; resolves with its exit code, which buildah passes on. */
async function stop(started: Started): Promise<number | null> {
  process.kill(started.pid, 'SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const tooSlow = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`not stopped within ${EXIT_TIMEOUT_MS / 1000} s of SIGTERM`)),
      EXIT_TIMEOUT_MS,
    )
  })
  try {
    return await Promise.race([started.exited, tooSlow])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs the image's healthcheck in a container of its own; resolves with its exit code. */
async function healthcheck(config: ImageConfig, env: Record<string, string>): Promise<number | null> {
  const [kind, ...test] = config.Healthcheck?.Test ?? []
  const command = kind === 'CMD-SHELL' ? ['/bin/sh', '-c', test.join(' ')] : test
  const child = runIn(await newContainer(IMAGE as string), command, { env })
  children.add(child)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

/** `url` with its tables in {@link OWN}, a schema the store creates (dropped first if left over). */
async function postgresTarget(url: string): Promise<{ db: string; drop(): Promise<void> }> {
  const db = new URL(url)
  db.searchParams.set('schema', OWN)
  const drop = async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`drop schema if exists ${OWN} cascade`).finally(() => client.end())
  }
  await drop()
  return { db: db.href, drop }
}

/** `url` on the database {@link OWN}, made new here: the binary has no option for its tables' names. */
async function mysqlTarget(url: string): Promise<{ db: string; drop(): Promise<void> }> {
  const query = async (sql: string) => {
    const connection = await mysql.createConnection(url)
    await connection.query(sql).finally(() => connection.end())
  }
  await query(`drop database if exists ${OWN}`)
  await query(`create database ${OWN}`)
  const db = new URL(url)
  db.pathname = `/${OWN}`
  return { db: db.href, drop: () => query(`drop database if exists ${OWN}`) }
}

describe(`the container image ${IMAGE ?? ''}`, { skip }, () => {
  let config: ImageConfig
  let data: string
  let env: Record<string, string>
  let created: { id: number; name: string }

  before(async () => {
    config = await imageConfig(IMAGE as string)
    // A new named volume starts as a copy of the image's /data, owner included: so does this one.
    const container = await newContainer(IMAGE as string)
    const root = await buildah(['mount', container])
    const { uid, gid } = statSync(join(root, 'data'))
    await buildah(['umount', container])
    data = mkdtempSync(join(tmpdir(), 'petstore-container-'))
    chownSync(data, uid, gid)
    env = { PORT: String(await freePort()), PETSTORE_API_KEYS: KEY }
  })

  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) killTree(child.pid as number)
    await removeContainers()
    if (data) rmSync(data, { recursive: true, force: true })
  })

  test('its configuration: not root, a healthcheck, port 8080, a /data volume', () => {
    const user = config.User ?? ''
    assert.ok(!/^(|root|0)(:|$)/.test(user), `the image runs as root (User ${JSON.stringify(user)}): it needs USER`)
    assert.match(config.Healthcheck?.Test?.[0] ?? '', /^CMD(-SHELL)?$/, 'the image has no HEALTHCHECK')
    assert.ok(config.ExposedPorts && '8080/tcp' in config.ExposedPorts, 'the image does not EXPOSE 8080')
    assert.ok(config.Volumes && '/data' in config.Volumes, 'the image has no /data VOLUME')
  })

  test('it serves the API on every interface, as a user that is not root', async () => {
    const server = await start(config, env, [`${data}:/data`])
    assert.equal(server.host, '0.0.0.0')
    assert.notEqual(uidOf(server.pid), 0, 'the server process runs as root')

    const health = await fetch(`${server.origin}/healthz`)
    assert.equal(health.status, 200)
    const refused = await fetch(`${server.origin}/v1/pets`)
    assert.equal(refused.status, 401)
    assert.equal((await refused.json()).status, 401)

    const empty = await fetch(`${server.origin}/v1/pets`, { headers: AUTH })
    assert.equal(empty.status, 200)
    assert.deepEqual(await empty.json(), [])
    const create = await fetch(`${server.origin}/v1/pets`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1, status: 'available' }),
    })
    assert.equal(create.status, 201)
    created = await create.json()
    assert.equal(created.name, 'Rex')
    const get = await fetch(`${server.origin}/v1/pets/${created.id}`, { headers: AUTH })
    assert.equal(get.status, 200)
    assert.deepEqual(await get.json(), created)
    const list = await fetch(`${server.origin}/v1/pets`, { headers: AUTH })
    assert.deepEqual(await list.json(), [created])

    assert.equal(await healthcheck(config, env), 0, 'the healthcheck fails while the server serves')
    assert.equal(await stop(server), 0, `SIGTERM did not end it with exit code 0\nstderr: ${server.stderr()}`)
    assert.notEqual(await healthcheck(config, env), 0, 'the healthcheck passes with no server')
  })

  test('a pet created survives a restart in a new container, on the /data volume', async (t) => {
    if (created === undefined) return t.skip('the serving test created no pet')
    const server = await start(config, env, [`${data}:/data`])
    const get = await fetch(`${server.origin}/v1/pets/${created.id}`, { headers: AUTH })
    assert.equal(get.status, 200)
    assert.deepEqual(await get.json(), created)
    assert.equal(await stop(server), 0, `SIGTERM did not end it with exit code 0\nstderr: ${server.stderr()}`)
  })

  for (const [name, url, target] of [
    ['PostgreSQL', POSTGRES_URL, postgresTarget],
    ['MySQL', MYSQL_URL, mysqlTarget],
  ] as const) {
    test(`it serves from ${name} through DATABASE_URL, with the driver it ships`, {
      skip: !url && `PETSTORE_TEST_${name === 'MySQL' ? 'MYSQL' : 'POSTGRES'}_URL not set`,
    }, async () => {
      const { db, drop } = await target(url as string)
      try {
        const server = await start(config, { ...env, DATABASE_URL: db }, [])
        const create = await fetch(`${server.origin}/v1/pets`, {
          method: 'POST',
          headers: { ...AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Rex on ${name}`, categoryId: 2 }),
        })
        assert.equal(create.status, 201, server.stderr())
        const pet = await create.json()
        const get = await fetch(`${server.origin}/v1/pets/${pet.id}`, { headers: AUTH })
        assert.deepEqual(await get.json(), pet)
        assert.equal((await fetch(`${server.origin}/healthz`)).status, 200)
        assert.equal(await stop(server), 0, `SIGTERM did not end it with exit code 0\nstderr: ${server.stderr()}`)
      } finally {
        await drop()
      }
    })
  }
})
