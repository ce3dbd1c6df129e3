/**
 * petstore-server/msw in real Chromium: the example page of examples/msw,
 * bundled by esbuild and served from 127.0.0.1 (a secure context) with MSW's
 * service worker from the installed msw package. The page registers
 * setupWorker(...petstoreHandlers(…)); its fetches to https://api.example.test
 * are answered by the worker, as that host does not exist. Outside CI a
 * machine without Chromium skips this with a message; under CI it fails.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, it } from 'node:test'
import { serveExample } from '../examples/msw/serve.js'
import { chromiumMissing, launchChromium, skipUnlessCi } from './helpers/chromium.js'

const reason = chromiumMissing()
const skip = skipUnlessCi(reason, 'the MSW browser test')
const tmp = mkdtempSync(join(tmpdir(), 'petstore-msw-'))
let example: Awaited<ReturnType<typeof serveExample>> | undefined

before(async () => {
  if (!reason) example = await serveExample(0)
})
after(async () => {
  await example?.close()
  rmSync(tmp, { recursive: true, force: true })
})

const BASE_URL = 'https://api.example.test/v1'

/** The target of a `Link` header's `rel="next"`, if any. */
const nextLink = (link: string | null | undefined) => /<([^>]+)>;\s*rel="next"/.exec(link ?? '')?.[1]

/** What a fetch in the page saw, as plain data. */
interface Seen {
  status: number
  body: any
  location: string | null
  link: string | null
}

it("the example page creates, lists and gets pets and is refused without a key, through MSW's worker", {
  skip,
  timeout: 120_000,
}, async () => {
  const context = await launchChromium(join(tmp, 'profile'))
  try {
    const page = context.pages()[0] ?? (await context.newPage())
    const problems: string[] = []
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      // Chromium logs every 4xx as "Failed to load resource": those are the answers under test.
      const text = message.text()
      if (message.type() === 'error' && !text.startsWith('Failed to load resource')) problems.push(`console: ${text}`)
    })
    const api: Array<{ url: string; status: number; fromWorker: boolean }> = []
    page.on('response', (response) => {
      const url = response.url()
      if (url.startsWith('https://api.example.test/')) {
        api.push({ url, status: response.status(), fromWorker: response.fromServiceWorker() })
      }
    })

    assert.equal((await page.goto(example!.url))?.status(), 200)
    // The page's own script: start the worker, create, list, and a request without a key.
    const output = page.locator('#output')
    await output.filter({ hasText: 'without a key' }).waitFor({ timeout: 30_000 })
    assert.deepEqual((await output.innerText()).split('\n'), [
      'POST /pets → 201 {"id":1,"name":"Rex","categoryId":1,"status":"available"}',
      'GET /pets → 200 [{"id":1,"name":"Rex","categoryId":1,"status":"available"}]',
      'GET /pets without a key → 401 unauthorized',
    ])

    // More from the same page, under the same worker and store: a get by Location, and pages by Link.
    // The fetch runs in the page (no named function in it: tsx would add a helper the page lacks).
    const send = (url: string, init: { method?: string; body?: string; key?: boolean } = {}) =>
      page.evaluate(
        async ([target, { key = true, ...rest }]) => {
          const headers = key ? { authorization: 'Bearer demo-key', 'content-type': 'application/json' } : undefined
          const response = await fetch(target, { ...rest, headers })
          return {
            status: response.status,
            body: await response.json(),
            location: response.headers.get('location'),
            link: response.headers.get('link'),
          } satisfies Seen
        },
        [new URL(url, BASE_URL).href, init] as const,
      )
    const created = await send('/v1/pets', { method: 'POST', body: JSON.stringify({ name: 'Tom', categoryId: 2 }) })
    const got = await send(created.location ?? '')
    const invalid = await send('/v1/pets', { method: 'POST', body: '{"name":""}' })
    const pages: Seen[] = []
    for (let url: string | undefined = '/v1/pets?limit=1'; url; url = nextLink(pages.at(-1)?.link)) {
      pages.push(await send(url))
    }
    assert.equal(created.status, 201)
    assert.deepEqual(created.body, { id: 2, name: 'Tom', categoryId: 2 })
    assert.equal(created.location, '/v1/pets/2')
    assert.deepEqual([got.status, got.body], [200, created.body])
    assert.equal(invalid.status, 400)
    assert.equal(invalid.body.code, 'validation_error')
    assert.deepEqual(
      pages.map((each) => [each.status, each.body.map((pet: { name: string }) => pet.name)]),
      [
        [200, ['Rex']],
        [200, ['Tom']],
      ],
    )

    // A path outside baseUrl is not intercepted: the page's own server answers it.
    const elsewhere = await page.evaluate(async () => {
      const response = await fetch('/elsewhere')
      return [response.status, await response.text()]
    })
    assert.deepEqual(elsewhere, [404, 'not found'])

    // Every request to the API was answered by the worker (the host does not exist).
    assert.ok(api.length >= 8, `${api.length} requests to the API`)
    assert.deepEqual(
      api.filter((each) => !each.fromWorker),
      [],
    )
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
