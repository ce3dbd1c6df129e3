/**
 * `--seed FILE` on the binary, read as the API reads a body: int64
 * categoryIds digit for digit, a UTF-8 BOM skipped, bytes that are not UTF-8
 * refused. And read with a bound: a file too large, a FIFO, a device or a
 * directory is one line and exit 1, at once; a parse error says where, never
 * what the file holds.
 *
 * Run: node --import tsx --test test/seed-file.test.ts
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { killAll, runToExit, startServer } from './helpers/spawn-server.js'

const KEY = 'seed-file-key'
/** The cap docs/testing-clients.md gives: 16 MiB. */
const SEED_MAX_BYTES = 16 * 1024 * 1024
/** A refusal is said at once: a read that blocks or never ends fails the test long before this. */
const REFUSED_WITHIN_MS = 20_000

const dir = mkdtempSync(join(tmpdir(), 'petstore-seed-file-'))
after(async () => {
  await killAll()
  rmSync(dir, { recursive: true, force: true })
})

const args = (seed: string) => ['--port', '0', '--key', KEY, '--db', 'memory', '--seed', seed]

/** The one line and exit 1 a seed at `path` gets. */
async function refusal(path: string): Promise<string> {
  const { code, stdout, stderr } = await runToExit(args(path), undefined, REFUSED_WITHIN_MS)
  assert.equal(code, 1, stderr)
  assert.equal(stdout, '')
  assert.equal(stderr.split('\n').length, 2, `one line: ${stderr}`)
  return stderr
}

/** The raw JSON text of `GET /v1/pets/{id}`: a bigint's digits, as served. */
async function served(seedText: string | Buffer, id: number): Promise<string> {
  const file = join(dir, `served-${id}-${Math.random()}.json`)
  writeFileSync(file, seedText)
  const server = await startServer(args(file))
  try {
    const answer = await fetch(`${server.url}/pets/${id}`, { headers: { authorization: `Bearer ${KEY}` } })
    assert.equal(answer.status, 200)
    return await answer.text()
  } finally {
    await server.stop()
  }
}

describe('--seed reads categoryIds as the API does', () => {
  test('int64 categoryIds load digit for digit', async () => {
    const text =
      '[{"id":1,"name":"Top","categoryId":9223372036854775807},' +
      '{"id":2,"name":"Odd","categoryId":9007199254740993},{"id":3,"name":"Low","categoryId":-9223372036854775808}]'
    assert.match(await served(text, 1), /"categoryId":9223372036854775807\b/)
    assert.match(await served(text, 2), /"categoryId":9007199254740993\b/)
    assert.match(await served(text, 3), /"categoryId":-9223372036854775808\b/)
  })

  test('past int64, or not an integer, is refused as the API refuses it', async () => {
    const over = join(dir, 'over.json')
    writeFileSync(over, '[{"name":"Over","categoryId":9223372036854775808}]')
    assert.equal(
      await refusal(over),
      `petstore-server: --seed ${over}: pets[0].categoryId: must be at most 9223372036854775807\n`,
    )
    const fraction = join(dir, 'fraction.json')
    writeFileSync(fraction, '[{"name":"Half","categoryId":9007199254740993.5}]')
    assert.equal(
      await refusal(fraction),
      `petstore-server: --seed ${fraction}: pets[0].categoryId: must be an integer\n`,
    )
  })
})

describe('--seed never echoes the file', () => {
  test('a file that is not JSON: where, not what', async () => {
    const keys = join(dir, 'keys.txt')
    writeFileSync(keys, 's3cr3t-api\nsecond-s3cr3t\n')
    const line = await refusal(keys)
    assert.doesNotMatch(line, /s3cr3t|"s/)
    assert.equal(
      line,
      `petstore-server: cannot read --seed ${keys}: is not JSON: unexpected character at line 1, column 1\n`,
    )

    const late = join(dir, 'late.json')
    writeFileSync(late, '[{"name":"Rex","categoryId":1},\n  {"name": s3cr3t}]')
    assert.equal(
      await refusal(late),
      `petstore-server: cannot read --seed ${late}: is not JSON: unexpected character at line 2, column 12\n`,
    )
    const cut = join(dir, 'cut.json')
    writeFileSync(cut, '[{"name":"s3cr3t"')
    assert.equal(await refusal(cut), `petstore-server: cannot read --seed ${cut}: is not JSON: it ends too soon\n`)
  })
})

describe('--seed is read with a bound', () => {
  test(`a file past ${SEED_MAX_BYTES} bytes is refused; one of exactly that size is read`, async () => {
    const large = join(dir, 'large.json')
    writeFileSync(large, '')
    // Sparse: no disk used.
    truncateSync(large, SEED_MAX_BYTES + 1)
    assert.equal(
      await refusal(large),
      `petstore-server: cannot read --seed ${large}: is larger than ${SEED_MAX_BYTES} bytes\n`,
    )
    const full = join(dir, 'full.json')
    writeFileSync(full, `[${' '.repeat(SEED_MAX_BYTES - 2)}]`)
    const server = await startServer(args(full))
    await server.stop()
  })

  test('a FIFO, a device and a directory: one line at once, nothing read', async () => {
    const fifo = join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    assert.equal(
      await refusal(fifo),
      `petstore-server: cannot read --seed ${fifo}: is not a regular file (a FIFO, a device or a socket)\n`,
    )
    for (const device of ['/dev/null', '/dev/zero']) {
      assert.equal(
        await refusal(device),
        `petstore-server: cannot read --seed ${device}: is not a regular file (a FIFO, a device or a socket)\n`,
      )
    }
    const folder = join(dir, 'folder')
    mkdirSync(folder)
    assert.equal(await refusal(folder), `petstore-server: cannot read --seed ${folder}: is a directory, not a file\n`)
  })

  test('a UTF-8 BOM is skipped; bytes that are not UTF-8 are refused', async () => {
    const pets = '[{"id":1,"name":"Zoë","categoryId":1}]'
    assert.match(await served(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pets)]), 1), /"Zoë"/)
    const latin1 = join(dir, 'latin1.json')
    writeFileSync(latin1, Buffer.from(pets, 'latin1'))
    assert.equal(await refusal(latin1), `petstore-server: cannot read --seed ${latin1}: is not UTF-8 text\n`)
  })
})
