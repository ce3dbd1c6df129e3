// Cold start of the binary: from spawning `node dist/bin/petstore-server.js --port 0 --db … --key k`
// to its first 200 on GET /v1/pets (target of issue 6: ≤ 0.4 s on memory and SQLite).
//
//   npm run build && npx tsx bench/cold-start.ts [--runs 10] [--binary dist/bin/petstore-server.js] [--json]
//
// Databases: memory; SQLite in a new file (the schema is created at start); SQLite in a file
// that already holds its schema and 1,000 pets (a restart). Launches take turns, one of each
// kind per round, so a change of load on the machine touches all alike. For each kind: the
// median and the spread of the time to the "listening" line and to the first 200, and (on
// Linux) the CPU time the process had used by then. `node -e 0` gives this machine's floor.
//
// A measurement, not a test: on a shared machine numbers move.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = resolve(fileURLToPath(import.meta.url), '../..')
const TARGET_MS = 400
const KEY = 'k'
/** Clock ticks per second of /proc/<pid>/stat: 100 on every Linux in practice. */
const CLOCK_TICKS = 100

interface Launch {
  listeningMs: number
  firstOkMs: number
  cpuMs: number | undefined
}

/** CPU time (user + system) the process has used so far, from /proc; undefined elsewhere. */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    // After "pid (comm) ": state is field 3 of stat, so utime (14) and stime (15) are at 11 and 12.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

async function launch(binary: string, db: string): Promise<Launch> {
  const started = performance.now()
  const child: ChildProcess = spawn(process.execPath, [binary, '--port', '0', '--db', db, '--key', KEY], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  try {
    let stderr = ''
    child.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = ''
      child.stdout!.on('data', (chunk) => {
        stdout += chunk
        const match = /listening on (\S+)/.exec(stdout)
        if (match) resolve(match[1]!)
      })
      child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)))
    })
    const listeningMs = performance.now() - started
    for (;;) {
      const response = await fetch(`${url}/pets`, { headers: { authorization: `Bearer ${KEY}` } }).catch(
        () => undefined,
      )
      await response?.arrayBuffer()
      if (response?.status === 200) break
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${stderr}`)
    }
    const firstOkMs = performance.now() - started
    return { listeningMs, firstOkMs, cpuMs: cpuMs(child.pid) }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    if (child.exitCode === null) child.kill('SIGTERM')
    await exited
  }
}

/** Spawn to exit of `node -e 0`: what any Node program pays on this machine now. */
async function nodeFloor(): Promise<number> {
  const started = performance.now()
  await new Promise((resolve) => spawn(process.execPath, ['-e', '0']).once('exit', resolve))
  return performance.now() - started
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '10' },
      binary: { type: 'string', default: join(ROOT, 'dist/bin/petstore-server.js') },
      json: { type: 'boolean', default: false },
    },
  })
  const binary = resolve(values.binary)
  if (!existsSync(binary)) throw new Error(`${binary} does not exist: run npm run build first`)
  const runs = Math.max(1, Math.trunc(Number(values.runs)))
  const dir = mkdtempSync(join(tmpdir(), 'petstore-cold-'))
  try {
    // A file with its schema and pets, as a restarted server finds it.
    const existing = join(dir, 'existing.db')
    {
      const child = spawn(process.execPath, [binary, '--port', '0', '--db', `sqlite:${existing}`, '--key', KEY], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      const url = await new Promise<string>((resolve) => {
        let stdout = ''
        child.stdout!.on('data', (chunk) => {
          stdout += chunk
          const match = /listening on (\S+)/.exec(stdout)
          if (match) resolve(match[1]!)
        })
      })
      for (let i = 0; i < 1000; i++) {
        await fetch(`${url}/pets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `pet ${i}`, categoryId: i, status: 'available' }),
        }).then((response) => response.arrayBuffer())
      }
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }

    const kinds: Record<string, (run: number) => string> = {
      memory: () => 'memory',
      'sqlite (new file)': (run) => `sqlite:${join(dir, `new-${run}.db`)}`,
      'sqlite (existing file)': () => `sqlite:${existing}`,
    }
    const results: Record<string, Launch[]> = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]))
    const floors: number[] = []
    for (let run = 0; run < runs; run++) {
      floors.push(await nodeFloor())
      for (const [kind, db] of Object.entries(kinds)) results[kind]!.push(await launch(binary, db(run)))
      process.stderr.write(`round ${run + 1}/${runs}\n`)
    }

    const summary = Object.entries(results).map(([kind, launches]) => {
      const cpu = launches.map((each) => each.cpuMs).filter((each): each is number => each !== undefined)
      const firstOk = launches.map((each) => each.firstOkMs)
      return {
        kind,
        listeningMs: median(launches.map((each) => each.listeningMs)),
        firstOkMs: median(firstOk),
        minMs: Math.min(...firstOk),
        maxMs: Math.max(...firstOk),
        cpuMs: cpu.length > 0 ? median(cpu) : undefined,
      }
    })
    const floorMs = median(floors)
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ binary, runs, floorMs, summary }, null, 2)}\n`)
      return
    }
    const lines = [
      `Cold start of ${binary.replace(`${ROOT}/`, '')} on Node ${process.versions.node}, median of ${runs} launches:`,
      '',
      'db                       listening   first 200   (min – max)       CPU used',
      ...summary.map(
        (each) =>
          `${each.kind.padEnd(24)} ${`${each.listeningMs.toFixed(0)} ms`.padStart(9)}   ${`${each.firstOkMs.toFixed(0)} ms`.padStart(9)}${each.firstOkMs > TARGET_MS ? ' ✗' : '  '}` +
          ` (${each.minMs.toFixed(0)} – ${each.maxMs.toFixed(0)} ms)`.padEnd(18) +
          `${each.cpuMs === undefined ? '' : `${each.cpuMs.toFixed(0)} ms`.padStart(9)}`,
      ),
      '',
      `node -e 0 (spawn to exit), the floor on this machine now: ${floorMs.toFixed(0)} ms`,
      `✗: first 200 later than ${TARGET_MS} ms.`,
    ]
    process.stdout.write(`${lines.join('\n')}\n`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
