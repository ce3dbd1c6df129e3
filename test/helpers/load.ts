/**
 * Load through running binaries, and reading it all back: the tests of
 * several processes (test/multiprocess.test.ts) and of `--workers`
 * (test/workers.test.ts) send thousands of concurrent creates, then check
 * every pet by id and in the list. Also: a fresh PostgreSQL schema for a
 * binary, dropped afterwards.
 */
import assert from 'node:assert/strict'
import { isDeepStrictEqual } from 'node:util'
import mysql from 'mysql2/promise'
import pg from 'pg'

export interface Pet {
  id: number
  name: string
  categoryId: number
  status?: string
}

export const STATUSES = ['available', 'pending', 'sold', undefined] as const

/** The n-th pet of a load: statuses in turn, the last of them none. */
export function nthPet(name: string, n: number): Omit<Pet, 'id'> {
  const status = STATUSES[n % STATUSES.length]
  return status === undefined ? { name, categoryId: n % 97 } : { name, categoryId: n % 97, status }
}

export interface Load {
  created: Pet[]
  /** Every answer that was not a 201, or the error of a request that got none. */
  failures: string[]
  ms: number
}

/**
 * `count` creates at `${apiUrl}/pets`, `inFlight` at a time, pet `i` being
 * `petOf(i)`. Global fetch is undici with keep-alive, so connections are
 * reused and the load is the server's, not TCP's.
 */
export async function createMany(
  apiUrl: string,
  key: string,
  { count, inFlight, petOf }: { count: number; inFlight: number; petOf: (i: number) => Omit<Pet, 'id'> },
): Promise<Load> {
  const created: Pet[] = []
  const failures: string[] = []
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  let next = 0
  const start = performance.now()
  const client = async () => {
    while (next < count) {
      const body = JSON.stringify(petOf(next++))
      try {
        const res = await fetch(`${apiUrl}/pets`, { method: 'POST', headers, body })
        const text = await res.text()
        if (res.status === 201) created.push(JSON.parse(text) as Pet)
        else failures.push(`${res.status} ${text}`)
      } catch (error) {
        failures.push(`fetch failed: ${(error as Error).cause ?? error}`)
      }
    }
  }
  await Promise.all(Array.from({ length: inFlight }, client))
  return { created, failures, ms: performance.now() - start }
}

/** Every pet listed at `${apiUrl}/pets`, following `Link: rel="next"` from pages of `page`. */
export async function listAll(apiUrl: string, key: string, page: number): Promise<Pet[]> {
  const pets: Pet[] = []
  let url: string | undefined = `${apiUrl}/pets?limit=${page}`
  while (url) {
    const res: Response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    const text = await res.text()
    assert.equal(res.status, 200, `GET ${url}: ${text}`)
    const onPage = JSON.parse(text) as Pet[]
    assert.ok(onPage.length <= page, `GET ${url}: ${onPage.length} pets on a page of ${page}`)
    pets.push(...onPage)
    const next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1]
    url = next === undefined ? undefined : new URL(next, url).href
  }
  return pets
}

/**
 * The pets of `expected` that are not read back as they were created, with
 * what was read instead; `read` fetches one pet, `inFlight` reads at a time.
 */
export async function mismatchesById(
  expected: readonly Pet[],
  read: (pet: Pet) => Promise<{ status: number; text: string }>,
  inFlight: number,
): Promise<string[]> {
  const wrong: string[] = []
  let next = 0
  const client = async () => {
    while (next < expected.length) {
      const pet = expected[next++] as Pet
      try {
        const { status, text } = await read(pet)
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {}
        if (status !== 200 || !isDeepStrictEqual(body, pet)) {
          wrong.push(`${pet.id}: ${status} ${text}, created as ${JSON.stringify(pet)}`)
        }
      } catch (error) {
        wrong.push(`${pet.id}: ${(error as Error).message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: inFlight }, client))
  return wrong
}

/**
 * Runs `work` with `connectionString` pointed at a fresh schema
 * (`?schema=<prefix>_<pid>_<time>`, which the binary creates), and drops
 * the schema afterwards, whatever `work` did.
 */
export async function inFreshSchema<T>(
  connectionString: string,
  prefix: string,
  work: (url: string) => Promise<T>,
): Promise<T> {
  const schema = `${prefix}_${process.pid}_${Date.now()}`
  const url = new URL(connectionString)
  url.searchParams.set('schema', schema)
  try {
    return await work(url.href)
  } finally {
    const client = new pg.Client({ connectionString })
    await client.connect()
    try {
      await client.query(`drop schema if exists "${schema}" cascade`)
    } finally {
      await client.end()
    }
  }
}

/**
 * Runs `work` with `uri` pointed at a fresh MySQL database (`<prefix>_<pid>_<time>`), and
 * drops the database afterwards, whatever `work` did.
 */
export async function inFreshMysqlDatabase<T>(
  uri: string,
  prefix: string,
  work: (url: string) => Promise<T>,
): Promise<T> {
  const database = `${prefix}_${process.pid}_${Date.now()}`
  const admin = async (statement: string) => {
    const connection = await mysql.createConnection(uri)
    try {
      await connection.query(statement)
    } finally {
      await connection.end()
    }
  }
  await admin(`create database \`${database}\` character set utf8mb4 collate utf8mb4_bin`)
  const url = new URL(uri)
  url.pathname = `/${database}`
  try {
    return await work(url.href)
  } finally {
    await admin(`drop database if exists \`${database}\``)
  }
}
