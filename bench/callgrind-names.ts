// Where a server's instructions go, by function, from the dumps `npm run bench:instructions --
// --keep DIR` leaves: each function's own (exclusive) instructions per request, with the
// JIT-compiled JavaScript named. callgrind knows V8's builtins, Node's C++ and libuv by their
// symbols, but code V8 compiled at run time only by address; run the servers with
// `node --perf-basic-prof` and V8 writes /tmp/perf-PID.map (start, size and name of every
// piece of code it made), which names those addresses. Given two dumps, it prints both and
// the difference, largest first.
//
//   npm run bench:instructions -- --keep /tmp/cg --scenario unauthorized \
//     --server "yardstick=node --perf-basic-prof bench/peers/node-http.mjs --db memory" \
//     --server "ours=node --perf-basic-prof dist/bin/petstore-server.js --db memory --log off"
//   npm run bench:names -- /tmp/cg/yardstick-1 /tmp/cg/ours-1 [--requests 5000] [--top 40] [--event D1mr]
//
// Each argument is a --keep folder (its main thread's dump, cg.out.1-01, is read) or a dump
// file. --event counts another of the dump's events instead of instructions: from a run with
// --cache-sim, I1mr (first-level instruction-cache misses), D1mr and D1mw (data-cache read and
// write misses), Bcm and Bim (mispredicted conditional and indirect branches). Needs
// callgrind_annotate (valgrind's package). A name is `file:line:column` of the function, as V8
// wrote it (`*` marks optimized code); code moved or freed after it was written shows as
// `(unnamed JIT code)`.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string', default: '5000' },
    top: { type: 'string', default: '40' },
    event: { type: 'string', default: 'Ir' },
  },
})
if (positionals.length < 1 || positionals.length > 2) throw new Error('give one or two dumps (or --keep folders)')
const requests = Number(values.requests)
const top = Number(values.top)
const event = values.event

interface Code {
  start: number
  end: number
  name: string
}

/** The perf map of the process that wrote `dump` (its `pid:` line), sorted by start. */
function perfMap(dump: string): Code[] {
  const pid = /^pid: (\d+)/m.exec(readFileSync(dump, 'utf8').slice(0, 4096))?.[1]
  const file = `/tmp/perf-${pid}.map`
  if (pid === undefined || !existsSync(file)) return []
  const codes: Code[] = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ')
    if (start === undefined || size === undefined || name.length === 0) continue
    const from = Number.parseInt(start, 16)
    codes.push({ start: from, end: from + Number.parseInt(size, 16), name: name.join(' ') })
  }
  return codes.sort((a, b) => a.start - b.start)
}

/** The code that holds `address`: the last one written there, if code was replaced. */
function nameOf(codes: readonly Code[], address: number): string {
  let low = 0
  let high = codes.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    if ((codes[middle] as Code).start <= address) low = middle + 1
    else high = middle - 1
  }
  // Later entries at the same place replace earlier ones; look back a little for one that holds it.
  for (let i = high; i >= 0 && i > high - 50; i--) {
    const code = codes[i] as Code
    if (code.start <= address && address < code.end) return code.name.replace(/file:\/\/\/\S*\//, '')
  }
  return '(unnamed JIT code)'
}

/** Exclusive instructions (or the `--event` chosen) per request, by function. */
function costs(path: string): Map<string, number> {
  const dump = statSync(path).isDirectory() ? join(path, 'cg.out.1-01') : path
  const codes = perfMap(dump)
  const annotated = spawnSync(
    'callgrind_annotate',
    ['--inclusive=no', '--threshold=100', '--auto=no', `--show=${event}`, `--sort=${event}`, dump],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  )
  if (annotated.status !== 0) throw new Error(`callgrind_annotate ${dump}: ${annotated.stderr}`)
  const byName = new Map<string, number>()
  let total = Number.POSITIVE_INFINITY
  let listing = false
  for (const line of annotated.stdout.split('\n')) {
    if (line.includes('file:function')) listing = true
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line)
    if (match === null) continue
    const [, count = '0', where = ''] = match
    const instructions = Number(count.replaceAll(',', ''))
    if (where.includes('PROGRAM TOTALS')) total = instructions
    if (!listing) continue
    // The program's entry points (main, Node's event loop) are listed with the whole run's count.
    if (instructions >= 0.99 * total) continue
    const jit = /^\?\?\?:0x([0-9a-f]+)\S* \[\?\?\?\]$/.exec(where)
    const name = jit
      ? nameOf(codes, Number.parseInt(jit[1] as string, 16))
      : where
          .replace(/^[^:]*:/, '')
          .replaceAll('(anonymous namespace)', '{anonymous}')
          .replace(/\(.*$/, '')
    byName.set(name, (byName.get(name) ?? 0) + instructions / requests)
  }
  return byName
}

const [first, second] = positionals.map(costs) as [Map<string, number>, Map<string, number> | undefined]
const figure = (value: number) => Math.round(value).toLocaleString('en').padStart(9)
if (second === undefined) {
  for (const [name, count] of [...first].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${figure(count)}  ${name}`)
  }
} else {
  const names = [...new Set([...first.keys(), ...second.keys()])]
  const difference = (name: string) => (second.get(name) ?? 0) - (first.get(name) ?? 0)
  console.log(`${'first'.padStart(9)} ${'second'.padStart(9)} ${'change'.padStart(9)}  function`)
  for (const name of names.sort((a, b) => Math.abs(difference(b)) - Math.abs(difference(a))).slice(0, top)) {
    const change = difference(name)
    const signed = `${change >= 0 ? '+' : '-'}${Math.round(Math.abs(change)).toLocaleString('en')}`
    console.log(`${figure(first.get(name) ?? 0)} ${figure(second.get(name) ?? 0)} ${signed.padStart(9)}  ${name}`)
  }
}
