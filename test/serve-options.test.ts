/**
 * The adapters' own options and handlers: `serve()` of each runtime, `toNodeListener` and
 * `withDocs` refuse at the call what would otherwise bind every interface, turn a limit off,
 * or answer every request with a 500; and another fetch handler's failure reaches the client
 * as a JSON 500, never as its stack.
 *
 * Run: node --import tsx --test test/serve-options.test.ts
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createPetstore, memoryStore } from 'petstore-server'
import { serve as serveOnBun } from 'petstore-server/bun'
import { serve as serveOnDeno } from 'petstore-server/deno'
import { withDocs } from 'petstore-server/docs'
import { serve, toNodeListener } from 'petstore-server/node'

const KEY = 'k'
const handler = createPetstore({ store: memoryStore(), keys: [KEY] })

/** Asserts that `run` throws (or rejects with) a TypeError whose message matches `message`. */
async function refuses(what: string, run: () => unknown, message: RegExp): Promise<void> {
  await assert.rejects(
    async () => run(),
    (error: Error) => error instanceof TypeError && message.test(error.message),
    what,
  )
}

describe('serve() options', () => {
  it('petstore-server/node refuses, before it listens, what Node would take silently or name otherwise', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['no handler', { port: 0 }, /handler must be a fetch handler/],
      ['a misspelt handler', { hanlder: handler, port: 0 }, /unknown option "hanlder" \(did you mean "handler"\?\)/],
      ['host for hostname', { handler, host: '0.0.0.0' }, /unknown option "host" \(did you mean "hostname"\?\)/],
      ['an empty hostname (every interface)', { handler, port: 0, hostname: '' }, /hostname must be a host name/],
      [
        'a port as a string (a Unix socket ./abc)',
        { handler, port: 'abc' },
        /port must be a whole number from 0 to 65535, got "abc"/,
      ],
      [
        'shutdownTimeoutMs: Infinity (cut after 1 ms)',
        { handler, port: 0, shutdownTimeoutMs: Infinity },
        /shutdownTimeoutMs/,
      ],
      [
        'maxConnections: -1 (no cap)',
        { handler, port: 0, maxConnections: -1 },
        /maxConnections must be a whole number/,
      ],
      [
        'firstRequestTimeoutMs: NaN (off)',
        { handler, port: 0, firstRequestTimeoutMs: Number.NaN },
        /firstRequestTimeoutMs/,
      ],
      [
        'headers longer than the request',
        { handler, port: 0, headersTimeoutMs: 20_000, requestTimeoutMs: 10_000 },
        /requestTimeoutMs \(10000\) must be at least headersTimeoutMs/,
      ],
      ['onResponse not a function', { handler, port: 0, onResponse: 'log' }, /onResponse must be a function/],
    ]
    for (const [what, options, message] of cases) await refuses(what, () => serve(options as never), message)
    // What the documentation says is no cap is still taken.
    const running = await serve({ handler, port: 0, maxConnections: Infinity, maxConnectionsPerAddress: 0 })
    await running.close()
  })

  it('petstore-server/bun and /deno check the same before they look for their runtime', async () => {
    for (const [name, serveOn] of [
      ['bun', serveOnBun],
      ['deno', serveOnDeno],
    ] as const) {
      await refuses(`${name}: no handler`, () => serveOn({} as never), /handler must be a fetch handler/)
      await refuses(`${name}: empty hostname`, () => serveOn({ handler, hostname: '' }), /hostname must be/)
      await refuses(`${name}: a misspelt option`, () => serveOn({ handler, prot: 0 } as never), /unknown option "prot"/)
    }
  })
})

describe('toNodeListener and withDocs', () => {
  it('refuse what is not a fetch handler, and withDocs options it does not know', async () => {
    await refuses(
      'toNodeListener(undefined)',
      () => toNodeListener(undefined as never),
      /toNodeListener: handler must be/,
    )
    await refuses('withDocs(string)', () => withDocs('x' as never), /withDocs: handler must be/)
    await refuses('withDocs base', () => withDocs(handler, { base: '/v1' } as never), /unknown option "base"/)
    // The same base paths as createPetstore's: an empty segment would make the page's links network-path references.
    await refuses(
      'withDocs basePath without /',
      () => withDocs(handler, { basePath: 'v1' }),
      /basePath must start with "\/"/,
    )
    await refuses(
      'withDocs basePath //v1',
      () => withDocs(handler, { basePath: '//v1' }),
      /withDocs: basePath must be a path of plain segments/,
    )
    await refuses(
      'withDocs basePath 5',
      () => withDocs(handler, { basePath: 5 as never }),
      /withDocs: basePath must be a string/,
    )
    await refuses('withDocs load', () => withDocs(handler, { load: 'x' as never }), /load must be a function/)
  })

  it("withDocs serves the page at the handler's own base path when none is given", async () => {
    const nested = withDocs(createPetstore({ store: memoryStore(), keys: [KEY], basePath: '/api/v1' }))
    const page = await nested(new Request('http://x/api/v1/docs'))
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<html/i)
    const document = await nested(new Request('http://x/api/v1/openapi.json'))
    assert.equal(document.status, 200)
    assert.equal((await nested(new Request('http://x/v1/docs'))).status, 404)
  })

  it("another fetch handler's failure is a JSON 500 without its message or stack; so is an answer that is no Response", async () => {
    const secret = 'db password hunter2'
    const handlers = [
      () => {
        throw new Error(secret)
      },
      async () => Promise.reject(new Error(secret)),
      async () => secret as never,
    ]
    const logged: unknown[] = []
    const original = console.error
    console.error = (...args: unknown[]) => void logged.push(args)
    try {
      for (const failing of handlers) {
        const server = createServer(toNodeListener(failing))
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
        try {
          const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`)
          const text = await res.text()
          assert.equal(res.status, 500)
          assert.equal(res.headers.get('content-type'), 'application/json')
          assert.equal((JSON.parse(text) as { code: string }).code, 'internal_error')
          assert.ok(!text.includes('hunter2') && !text.includes(' at '), text)
        } finally {
          await new Promise((resolve) => server.close(resolve))
        }
      }
    } finally {
      console.error = original
    }
    // Told on stderr instead, where the operator looks.
    assert.equal(logged.length, handlers.length)
    assert.ok(String(logged.flat()).includes('hunter2'))
  })
})
