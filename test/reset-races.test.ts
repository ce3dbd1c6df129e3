/**
 * Resets racing creates on the binary, on MariaDB (PETSTORE_TEST_MYSQL_URL; under CI it must be
 * set): many creates and resets at once are never a 500 and lose no acknowledged pet, and the
 * quiet creates after a reset that overlapped creates get the ids right after the seed.
 *
 * Run: node --import tsx --test test/reset-races.test.ts
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import mysql from 'mysql2/promise'
import { inFreshMysqlDatabase, listAll, type Pet } from './helpers/load.js'
import { killAll, type RunningServer, startServer } from './helpers/spawn-server.js'
import { until } from './helpers/until.js'

const KEY = 'race-key'
const MYSQL_URL = process.env.PETSTORE_TEST_MYSQL_URL
const noMysql = !MYSQL_URL && !process.env.CI && 'PETSTORE_TEST_MYSQL_URL not set'

const dir = mkdtempSync(join(tmpdir(), 'petstore-races-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

/** 100 seeded pets, ids 1 to 100: each reset deletes what the creates added and inserts these again. */
const SEED = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `Seed ${i + 1}`, categoryId: 1 }))
const seedFile = join(dir, 'seed.json')
writeFileSync(seedFile, JSON.stringify(SEED))

const start = (db: string) =>
  startServer(['--port', '0', '--key', KEY, '--log', 'off', '--db', db, '--seed', seedFile, '--test-control'])

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

/** One create: its status, its Retry-After, and the pet when it was stored. */
async function create(server: RunningServer, name: string, status?: string) {
  const body = JSON.stringify({ name, categoryId: 2, status })
  const answer = await fetch(`${server.url}/pets`, { method: 'POST', headers, body })
  const text = await answer.text()
  return {
    status: answer.status,
    retryAfter: answer.headers.get('retry-after'),
    text,
    pet: answer.status === 201 ? (JSON.parse(text) as Pet) : undefined,
  }
}

async function reset(server: RunningServer) {
  const answer = await fetch(`${server.origin}/__petstore/reset`, { method: 'POST', headers })
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), text: await answer.text() }
}

/** A failure is a 503 that says when to come back: never a 500. */
function checkFailures(failures: Array<{ status: number; retryAfter: string | null; text: string }>, what: string) {
  for (const failure of failures) {
    assert.equal(failure.status, 503, `${what}: ${failure.status} ${failure.text}`)
    assert.match(failure.retryAfter ?? '', /^[1-9][0-9]*$/, `${what}: a 503 without Retry-After`)
  }
}

/** Creates in flight, and resets by each of two resetters, in the race: a lone create now and then, and batches. */
const CLIENTS = 8
const RESETS = 60

describe('resets racing creates on MariaDB', { skip: noMysql, timeout: 180_000 }, () => {
  test('many creates and resets at once: no 500, and no acknowledged pet lost', async () => {
    await inFreshMysqlDatabase(MYSQL_URL ?? '', 'hard_races', async (db) => {
      const server = await start(db)
      try {
        let resetting = true
        const createFailures: Array<Awaited<ReturnType<typeof create>>> = []
        const resetFailures: Array<Awaited<ReturnType<typeof reset>>> = []
        /** Pets acknowledged after the last reset was answered: each must be there at the end. */
        const kept: Pet[] = []
        let count = 0
        const creator = async (client: number) => {
          // Creates while the resets run, then a few after the last one.
          for (let quiet = 0; quiet < 5; ) {
            const late = !resetting
            const made = await create(server, `c${client}-${count++}`)
            if (made.pet === undefined) createFailures.push(made)
            else if (late) kept.push(made.pet)
            if (late) quiet++
          }
        }
        const resetter = async () => {
          for (let i = 0; i < RESETS; i++) {
            const answer = await reset(server)
            if (answer.status !== 204) resetFailures.push(answer)
          }
        }
        await Promise.all([
          ...Array.from({ length: CLIENTS }, (_, client) => creator(client)),
          Promise.all([resetter(), resetter()]).then(() => {
            resetting = false
          }),
        ])
        checkFailures(createFailures, 'a create')
        checkFailures(resetFailures, 'a reset')
        const listed = await listAll(server.url, KEY, 100)
        const ids = listed.map((pet) => pet.id)
        assert.equal(new Set(ids).size, ids.length, 'no id listed twice')
        const byId = new Map(listed.map((pet) => [pet.id, pet]))
        for (const pet of kept) assert.deepEqual(byId.get(pet.id), pet, `pet ${pet.id}, acknowledged, is kept`)
        assert.ok(kept.length >= CLIENTS * 5 - createFailures.length)
      } finally {
        await server.stop()
      }
    })
  })

  test('a create that loses a deadlock is tried again: a 201, not a 500', async () => {
    await inFreshMysqlDatabase(MYSQL_URL ?? '', 'hard_deadlock', async (db) => {
      const server = await start(db)
      // A transaction of the test's own, heavier than a create, so that InnoDB rolls the create back.
      const other = await mysql.createConnection(db)
      const watch = await mysql.createConnection(db)
      /**
       * Whether a transaction waits for a lock: the create, behind the test's gap lock. InnoDB
       * refreshes what it shows only when nobody read it for 0.1 s: asked every 20 ms, it never changes.
       */
      const createWaits = async () => {
        await sleep(150)
        const [rows] = await watch.query(
          "select count(*) as n from information_schema.innodb_trx where trx_state = 'LOCK WAIT'",
        )
        return Number((rows as Array<{ n: unknown }>)[0]?.n) > 0
      }
      try {
        await other.query('start transaction')
        // Rows by their ids, short of the last: the gap where the create's row goes stays free.
        await other.query("update petstore_pets set name = concat(name, '!') where id between 1 and 50")
        // The gap where the create's row goes in the index by status: no pet is sold yet.
        await other.query(
          "select id from petstore_pets force index (petstore_pets_status_id) where status = 'sold' for update",
        )
        const answer = create(server, 'Deadlocked', 'sold')
        // Its row is in the table, its index entry waits for the gap: now ask for the row.
        await until(createWaits, 'the create waiting for the gap lock')
        await other.query('select id from petstore_pets where id > 100 for update')
        // InnoDB chose the create as the victim. Tried again, it waits for the gap once more.
        const settled = await Promise.race([
          answer.then(() => true),
          until(createWaits, 'the create tried again').then(() => false),
        ])
        await other.query('rollback')
        const made = await answer
        assert.equal(made.status, 201, `${made.status} ${made.text} (answered before the rollback: ${settled})`)
        const stored = await fetch(`${server.url}/pets/${made.pet?.id}`, { headers })
        assert.deepEqual(await stored.json(), made.pet)
      } finally {
        await other.end()
        await watch.end()
        await server.stop()
      }
    })
  })

  test('after resets that overlap creates, quiet creates get the ids right after the seed', async () => {
    await inFreshMysqlDatabase(MYSQL_URL ?? '', 'hard_ids', async (db) => {
      const server = await start(db)
      try {
        let creating = true
        const creator = async (client: number) => {
          for (let i = 0; creating; i++) {
            const made = await create(server, `c${client}-${i}`)
            assert.ok(made.status === 201, `${made.status} ${made.text}`)
          }
        }
        const resetter = async () => {
          for (let i = 0; i < 5; i++) {
            await sleep(100)
            const answer = await reset(server)
            assert.equal(answer.status, 204, answer.text)
          }
          creating = false
        }
        await Promise.all([...Array.from({ length: CLIENTS }, (_, client) => creator(client)), resetter()])
        // What the last reset left: the seed, then the creates that came after it, from 101 on.
        const left = (await listAll(server.url, KEY, 100)).map((pet) => pet.id)
        const after = left.slice(SEED.length)
        assert.deepEqual(
          left.slice(0, SEED.length),
          SEED.map((pet) => pet.id),
        )
        assert.deepEqual(
          after,
          after.map((_, i) => SEED.length + 1 + i),
          'the creates after the reset, from 101 on',
        )
        const quiet: number[] = []
        for (let i = 0; i < 3; i++) quiet.push((await create(server, `quiet ${i}`)).pet?.id ?? 0)
        const next = SEED.length + after.length + 1
        assert.deepEqual(quiet, [next, next + 1, next + 2])
      } finally {
        await server.stop()
      }
    })
  })
})
