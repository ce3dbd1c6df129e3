/**
 * Soak: the built binary (dist/bin) on SQLite and on PostgreSQL at once, for a
 * while, under mixed traffic at a moderate rate: lists, filtered lists, deep
 * cursor walks, gets, creates, 401s, bad bodies, uploads aborted midway and
 * clients that leave mid-answer. Halfway through, PostgreSQL "restarts": every
 * connection of this binary is terminated (pg_terminate_backend, found by the
 * `application_name` set in its URL; the shared server itself is never
 * touched), again and again for a few seconds.
 *
 * Every 30 s it prints RSS, heap, event-loop delay p99 (the binary's own
 * `PETSTORE_STATS_INTERVAL_MS` line), open fds (/proc) and pool connections
 * (pg_stat_activity). It fails if RSS or fds grow by more than 10 % from
 * minute 2 to the end, if any answer is a 5xx other than a 503 during the
 * restart, or if a pet acknowledged with a 201 is missing at the end. It ends
 * with a summary for the README (minute 2 against the end, and the largest
 * sample); `--out` writes it and the 30-second table in Markdown.
 *
 * Run: npm run build && npm run soak -- [--minutes 10] [--rate 40] [--out soak.md]
 * PostgreSQL from PETSTORE_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import type { Stats } from '../bin/stats.js'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '40' },
    out: { type: 'string' },
    'sample-seconds': { type: 'string', default: '30' },
  },
})
const DURATION_MS = Number(values.minutes) * 60_000
/** Requests a second, per database. */
const RATE = Number(values.rate)
const SAMPLE_MS = Number(values['sample-seconds']) * 1_000
const PG_URL = process.env.PETSTORE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const KEY = 'soak-key'
const AUTH = { authorization: `Bearer ${KEY}` }
const ROOT = new URL('../', import.meta.url).pathname
const STATUSES = ['available', 'pending', 'sold'] as const

interface Sample {
  minute: number
  db: string
  rssMiB: number
  heapUsedMiB: number
  heapTotalMiB: number
  liveHeapMiB: number
  loopDelayP99Ms: number
  fds: number
  pool: number | string
  requests: number
}

/** One database's run: its binary, what it acknowledged, and what went wrong. */
class Target {
  readonly acknowledged = new Map<number, string>()
  readonly failures: string[] = []
  readonly counts = new Map<string, number>()
  requests = 0
  lastStats: Stats | undefined
  /** While set, 503 is an expected answer (the database is "down"). */
  restartUntil = 0
  child: ChildProcess | undefined
  pid = 0
  port = 0

  constructor(
    readonly db: string,
    readonly url: string,
  ) {}

  count(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1)
  }

  /** Any 5xx is a failure, but a 503 while the database restarts. */
  check(status: number, what: string): void {
    this.requests++
    this.count(`${what} ${status}`)
    if (status >= 500 && !(status === 503 && Date.now() < this.restartUntil)) {
      this.failures.push(`${new Date().toISOString()} ${what}: ${status}`)
    }
  }
}

async function call(target: Target, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${target.port}${path}`, { ...init, signal: AbortSignal.timeout(10_000) })
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T

/** One request of the mix, chosen at random. */
async function oneOfTheMix(target: Target): Promise<void> {
  const roll = Math.random()
  if (roll < 0.2) {
    const answer = await call(target, '/v1/pets?limit=20', { headers: AUTH })
    await answer.arrayBuffer()
    target.check(answer.status, 'list')
  } else if (roll < 0.35) {
    const answer = await call(target, `/v1/pets?status=${pick(STATUSES)}&limit=10`, { headers: AUTH })
    await answer.arrayBuffer()
    target.check(answer.status, 'filtered')
  } else if (roll < 0.45) {
    // A deep walk: up to 20 pages along the Link header.
    let path: string | undefined = `/v1/pets?limit=5${Math.random() < 0.5 ? `&status=${pick(STATUSES)}` : ''}`
    for (let page = 0; path !== undefined && page < 20; page++) {
      const answer = await call(target, path, { headers: AUTH })
      await answer.arrayBuffer()
      target.check(answer.status, 'cursor page')
      const next = /<([^>]+)>;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1]
      path = next === undefined ? undefined : new URL(next, 'http://x').pathname + new URL(next, 'http://x').search
    }
  } else if (roll < 0.6) {
    const ids = [...target.acknowledged.keys()]
    const id = ids.length > 0 ? pick(ids) : 1
    const answer = await call(target, `/v1/pets/${id}`, { headers: AUTH })
    await answer.arrayBuffer()
    target.check(answer.status, 'get')
  } else if (roll < 0.78) {
    const name = `soak-${target.requests}-${Math.random().toString(36).slice(2, 8)}`
    const answer = await call(target, '/v1/pets', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 + Math.floor(Math.random() * 5), status: pick(STATUSES) }),
    })
    const body = (await answer.json().catch(() => undefined)) as { id?: number } | undefined
    target.check(answer.status, 'create')
    if (answer.status === 201 && typeof body?.id === 'number') target.acknowledged.set(body.id, name)
  } else if (roll < 0.83) {
    const answer = await call(target, '/v1/pets', { headers: { authorization: 'Bearer wrong' } })
    await answer.arrayBuffer()
    target.check(answer.status, '401')
  } else if (roll < 0.89) {
    const body = pick(['{"name":', '{"name":""}', '[]', '{"name":"x","status":"lost"}', 'x'.repeat(200_000)])
    const answer = await call(target, '/v1/pets', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body,
    })
    await answer.arrayBuffer()
    target.check(answer.status, 'bad body')
  } else if (roll < 0.95) {
    await rawThenLeave(
      target,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"name":"abo`,
      'aborted upload',
    )
  } else {
    await rawThenLeave(
      target,
      `GET /v1/pets?limit=100 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`,
      'left mid-answer',
    )
  }
}

/** Sends `text` on a raw socket and leaves: after the first bytes of the answer, or 50 ms without one. */
function rawThenLeave(target: Target, text: string, what: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(target.port, '127.0.0.1')
    const leave = () => {
      socket.destroy()
      resolve()
    }
    socket.on('error', leave)
    socket.once('data', leave)
    socket.once('connect', () => {
      socket.write(text)
      setTimeout(leave, 50)
    })
    target.requests++
    target.count(what)
  })
}

/** Runs the mix at `RATE` a second until `until`, with a few clients at once. */
async function drive(target: Target, until: number): Promise<void> {
  const clients = 4
  const gap = (1_000 * clients) / RATE
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < until) {
        const started = Date.now()
        try {
          await oneOfTheMix(target)
        } catch (error) {
          // fetch failing outright: no answer at all. Only while the database restarts is a closed connection thinkable.
          const what = `no answer: ${(error as Error).cause ?? (error as Error).message}`
          target.count(what)
          if (Date.now() >= target.restartUntil) target.failures.push(`${new Date().toISOString()} ${what}`)
        }
        await sleep(Math.max(0, gap - (Date.now() - started)))
      }
    }),
  )
}

function procStats(pid: number): { rssMiB: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024
  return { rssMiB: Math.round(rss * 10) / 10, fds: readdirSync(`/proc/${pid}/fd`).length }
}

async function main(): Promise<void> {
  const binary = join(ROOT, 'dist/bin/petstore-server.js')
  try {
    readFileSync(binary)
  } catch {
    throw new Error('dist/bin/petstore-server.js is missing: run npm run build first')
  }
  const dir = mkdtempSync(join(tmpdir(), 'petstore-soak-'))
  const tag = `soak_${process.pid}_${Date.now().toString(36)}`
  const pgUrl = new URL(PG_URL)
  pgUrl.searchParams.set('schema', tag)
  pgUrl.searchParams.set('application_name', tag)
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  const targets = [new Target('sqlite', `sqlite:${join(dir, 'soak.db')}`), new Target('postgres', pgUrl.href)]
  const samples: Sample[] = []
  const started = Date.now()
  try {
    for (const target of targets) {
      await startBinary(target, binary)
    }
    const until = started + DURATION_MS
    const sampler = setInterval(() => void sample(), SAMPLE_MS)
    const sample = async () => {
      for (const target of targets) {
        const outside = procStats(target.pid)
        let pool: number | string = 'n/a (1 file)'
        if (target.db === 'postgres') {
          const { rows } = await admin.query(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [tag],
          )
          pool = rows[0].n
        }
        const row: Sample = {
          minute: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
          db: target.db,
          rssMiB: outside.rssMiB,
          heapUsedMiB: target.lastStats?.heapUsedMiB ?? Number.NaN,
          heapTotalMiB: target.lastStats?.heapTotalMiB ?? Number.NaN,
          liveHeapMiB: target.lastStats?.liveHeapMiB ?? Number.NaN,
          loopDelayP99Ms: target.lastStats?.loopDelayP99Ms ?? Number.NaN,
          fds: outside.fds,
          pool,
          requests: target.requests,
        }
        samples.push(row)
        console.log(formatRow(row))
      }
    }
    console.log(HEADER)
    const postgres = targets[1] as Target
    const restart = (async () => {
      await sleep(DURATION_MS / 2)
      // The database is down for 5 s: every connection of the binary is cut, and new ones too as they come.
      postgres.restartUntil = Date.now() + 15_000
      const downUntil = Date.now() + 5_000
      let terminated = 0
      while (Date.now() < downUntil) {
        const { rows } = await admin.query(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [tag],
        )
        terminated += rows[0].n
        await sleep(200)
      }
      console.log(
        `# postgres "restart" at minute ${((Date.now() - started) / 60_000).toFixed(1)}: ${terminated} backends terminated over 5 s`,
      )
    })()
    await Promise.all([...targets.map((target) => drive(target, until)), restart])
    clearInterval(sampler)
    await sample()

    // Every acknowledged pet is still there, with its name.
    for (const target of targets) {
      let missing = 0
      for (const [id, name] of target.acknowledged) {
        const answer = await call(target, `/v1/pets/${id}`, { headers: AUTH })
        const pet = (await answer.json().catch(() => undefined)) as { name?: string } | undefined
        if (answer.status !== 200 || pet?.name !== name) {
          missing++
          if (missing <= 5) target.failures.push(`acknowledged pet ${id} (${name}): ${answer.status}`)
        }
      }
      if (missing > 0) target.failures.push(`${missing} of ${target.acknowledged.size} acknowledged pets missing`)
      console.log(
        `# ${target.db}: ${target.requests} requests, ${target.acknowledged.size} pets acknowledged, ${missing} missing`,
      )
      console.log(
        `# ${target.db} answers: ${[...target.counts]
          .sort()
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')}`,
      )
    }
    // Growth from minute 2 (or a fifth of a shorter run) to the end, each the median of 3 samples: a single
    // sample swings by 20-40 % as V8 grows and shrinks its heap (measured), a leak moves the median.
    // Minute 2 is the issue's, and kept: no cache of the binary takes longer to fill (the cursor cache is
    // bounded and the walks here reuse a few hundred cursors), and by minute 2 RSS is already within the
    // band it moves in for the rest of a 30-minute run. The live heap (after a full collection) is shown,
    // not checked: it tells a leak from V8's reserve when RSS fails, but is not the issue's criterion.
    const from = Math.min(2, DURATION_MS / 60_000 / 5)
    for (const target of targets) {
      const mine = samples.filter((row) => row.db === target.db)
      const start = mine.findIndex((row) => row.minute >= from - 0.05)
      if (start < 0 || mine.length - start < 2) continue
      const baseRows = mine.slice(start, start + WINDOW)
      const lastRows = mine.slice(-WINDOW)
      for (const field of ['rssMiB', 'fds'] as const) {
        const base = median(baseRows.map((row) => row[field]))
        const last = median(lastRows.map((row) => row[field]))
        const growth = (last - base) / base
        console.log(
          `# ${target.db} ${field}: median ${base} from minute ${baseRows[0]?.minute}, ${last} at the end (${(growth * 100).toFixed(1)} %)`,
        )
        if (growth > 0.1)
          target.failures.push(`${field} grew ${(growth * 100).toFixed(1)} % from minute ${baseRows[0]?.minute}`)
      }
    }
    const summary = summaryTable(
      samples,
      targets.map((target) => target.db),
      from,
    )
    console.log(`\n${summary}\n`)
    const table = [HEADER, ...samples.map(formatRow)].join('\n')
    if (values.out) writeFileSync(values.out, `${summary}\n\n${table}\n`)
    const failures = targets.flatMap((target) => target.failures.map((failure) => `${target.db}: ${failure}`))
    if (failures.length > 0) {
      console.log(`FAIL\n${failures.slice(0, 50).join('\n')}`)
      process.exitCode = 1
    } else console.log('PASS')
  } finally {
    for (const target of targets) await stopBinary(target)
    await admin.query(`DROP SCHEMA IF EXISTS "${tag}" CASCADE`).catch(() => {})
    await admin.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Samples per median, at the start and at the end of the growth check. */
const WINDOW = 3
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] as number

const HEADER =
  '| minute | db | RSS MiB | heap used / total MiB | live heap MiB | loop p99 ms | fds | pool | requests |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|'
const formatRow = (row: Sample) =>
  `| ${row.minute} | ${row.db} | ${row.rssMiB} | ${row.heapUsedMiB} / ${row.heapTotalMiB} | ${row.liveHeapMiB} | ${row.loopDelayP99Ms} | ${row.fds} | ${row.pool} | ${row.requests} |`

/** The columns of the summary, with how each is read off a sample. */
const SUMMARY_FIELDS: ReadonlyArray<readonly [string, (row: Sample) => number]> = [
  ['RSS MiB', (row) => row.rssMiB],
  ['heap used MiB', (row) => row.heapUsedMiB],
  ['heap total MiB', (row) => row.heapTotalMiB],
  ['live heap MiB', (row) => row.liveHeapMiB],
  ['loop p99 ms', (row) => row.loopDelayP99Ms],
  ['fds', (row) => row.fds],
  ['pool', (row) => (typeof row.pool === 'number' ? row.pool : Number.NaN)],
]

/**
 * The table for the README: per database and measure, the median of {@link WINDOW} samples from
 * `fromMinute` and at the end, the change between them, and the largest sample of the run.
 */
function summaryTable(samples: readonly Sample[], dbs: readonly string[], fromMinute: number): string {
  const lines = [
    `| db | measure | minute ${fromMinute} (median) | end (median) | change | max |`,
    '|---|---|---:|---:|---:|---:|',
  ]
  for (const db of dbs) {
    const mine = samples.filter((row) => row.db === db)
    const start = mine.findIndex((row) => row.minute >= fromMinute - 0.05)
    if (start < 0) continue
    for (const [name, read] of SUMMARY_FIELDS) {
      const finite = (rows: readonly Sample[]) => rows.map(read).filter(Number.isFinite)
      const values = finite(mine)
      if (values.length === 0) continue
      const base = median(finite(mine.slice(start, start + WINDOW)))
      const last = median(finite(mine.slice(-WINDOW)))
      const change = base > 0 && Number.isFinite(last) ? `${(((last - base) / base) * 100).toFixed(1)} %` : 'n/a'
      lines.push(`| ${db} | ${name} | ${base ?? 'n/a'} | ${last ?? 'n/a'} | ${change} | ${Math.max(...values)} |`)
    }
  }
  return lines.join('\n')
}

/**
 * V8's young generation, fixed at the size it grows to by itself (16 MiB semi-spaces, Node 20 on
 * x64). Left to grow, it does so as V8 sees the allocation rate: measured, within the first minute
 * on PostgreSQL, but over 7 minutes (8-minute run) to 25 (30-minute run) on SQLite, which allocates
 * less per request: heap total 17 → 49 MiB and RSS 80 → 105 MiB, while the heap live after a full
 * collection stayed at 10.5-10.8 MiB. That is V8 sizing itself once, not the process holding more,
 * and it failed the RSS check. Starting at the final size, growth from minute 2 is growth of what the
 * process holds; the rest of the binary runs as it does in production.
 */
const YOUNG_GENERATION = ['--min-semi-space-size=16', '--max-semi-space-size=16']

/** Starts the binary, resolves once it listens; its stats lines update `target.lastStats`. */
function startBinary(target: Target, binary: string): Promise<void> {
  const args = [...YOUNG_GENERATION, binary, '--port', '0', '--key', KEY, '--db', target.url]
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PETSTORE_STATS_INTERVAL_MS: String(SAMPLE_MS) },
  })
  target.child = child
  target.pid = child.pid as number
  createInterface({ input: child.stderr }).on('line', (line) => {
    const json = /^petstore-server stats (\{.*\})$/.exec(line)?.[1]
    if (json) target.lastStats = JSON.parse(json)
    // The binary logs each 5xx at length (onError): counted, not echoed.
    else if (/^petstore: .* failed: /.test(line)) target.count('5xx logged by the binary')
  })
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${target.db}: the binary exited (${code}) before listening`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      const port = /http:\/\/127\.0\.0\.1:(\d+)/.exec(line)?.[1]
      if (port) {
        target.port = Number(port)
        resolve()
      }
    })
  })
}

/** SIGTERM, then SIGKILL after 15 s. */
async function stopBinary(target: Target): Promise<void> {
  const child = target.child
  if (!child || child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  await exited
  clearTimeout(timer)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
