/**
 * The API reference page's routes, over HTTP-shaped `Request`s: what
 * `petstore-server/docs` adds to a handler, what it leaves alone, and that
 * `import 'petstore-server'` does not reach it. The page in a real browser:
 * test/docs-browser.test.ts.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createPetstore, memoryStore } from 'petstore-server'
import { DOCS_CSP, withDocs } from 'petstore-server/docs'
import { parseCli } from '../bin/options.js'
import { assertError, call } from './helpers/client.js'

const api = (basePath?: string) => createPetstore({ store: memoryStore(), keys: ['k'], basePath })
const get = (handler: (request: Request) => Promise<Response> | Response, path: string, init?: RequestInit) =>
  handler(new Request(`http://x${path}`, init))

describe('withDocs', () => {
  const handler = withDocs(api())

  it('serves the page without a key, under its CSP, and the API still wants one', async () => {
    const page = await get(handler, '/v1/docs')
    assert.equal(page.status, 200)
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.equal(page.headers.get('content-security-policy'), DOCS_CSP)
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
    const html = await page.text()
    assert.match(html, /<script src="\/v1\/docs\/swagger-ui-bundle\.js"><\/script>/)
    assert.doesNotMatch(html, /<script>|<style|style=|https?:/, 'nothing inline, nothing from elsewhere')
    assert.equal((await get(handler, '/v1/docs/')).status, 200)
    assert.equal((await get(handler, '/v1/pets')).status, 401)
    assert.equal((await get(handler, '/v1/pets', { headers: { authorization: 'Bearer k' } })).status, 200)
  })

  it('serves the renderer and the script that points it at the document', async () => {
    const bundle = await get(handler, '/v1/docs/swagger-ui-bundle.js')
    assert.equal(bundle.status, 200)
    assert.equal(bundle.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.ok((await bundle.text()).length > 100_000)
    const css = await get(handler, '/v1/docs/swagger-ui.css')
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8')
    const init = await (await get(handler, '/v1/docs/init.js')).text()
    assert.match(init, /"url": "\/v1\/openapi\.json"/)
    assert.match(init, /"validatorUrl": null/)
  })

  it('answers other methods and other files with JSON errors', async () => {
    const post = await call(handler, '/v1/docs', { method: 'POST', auth: false })
    assertError(post, 405, 'method_not_allowed')
    assert.equal(post.headers.get('allow'), 'GET, HEAD')
    assert.equal(post.body.message, 'Method not allowed; use GET, HEAD')
    assertError(await call(handler, '/v1/docs/index.html', { auth: false }), 404, 'not_found')
    assertError(await call(handler, '/v1/docs/swagger-ui-bundle.js/x', { auth: false }), 404, 'not_found')
    const head = await get(handler, '/v1/docs', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(await head.text(), '')
    const page = await (await get(handler, '/v1/docs')).text()
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(page)))
  })

  it("gives the page's answers a request id, and tells createPetstore's onResponse of them", async () => {
    const told: { route: string | null; status: number; requestId: string }[] = []
    const observed = withDocs(
      createPetstore({
        store: memoryStore(),
        keys: ['k'],
        onResponse: ({ route, status, requestId }) => told.push({ route, status, requestId }),
      }),
    )
    const page = await get(observed, '/v1/docs/init.js', { headers: { 'x-request-id': 'mine-1' } })
    assert.equal(page.headers.get('x-request-id'), 'mine-1')
    const missing = await get(observed, '/v1/docs/nope')
    assert.match(missing.headers.get('x-request-id') ?? '', /^\S+-\w+$/)
    assert.deepEqual(told, [
      { route: '/v1/docs', status: 200, requestId: 'mine-1' },
      { route: null, status: 404, requestId: missing.headers.get('x-request-id') },
    ])
  })

  // That it keeps the Node adapter's direct path is checked on the packed package (test/package.test.ts).

  it('follows basePath, and wraps a handler of any kind', async () => {
    const nested = withDocs(api('/api/v1'), { basePath: '/api/v1' })
    assert.match(await (await get(nested, '/api/v1/docs')).text(), /\/api\/v1\/docs\/init\.js/)
    const plain = withDocs(async () => new Response('theirs'))
    assert.equal(await (await get(plain, '/elsewhere')).text(), 'theirs')
    assert.equal((await get(plain, '/v1/docs')).status, 200)
  })

  it('says why when the renderer cannot be read, and tries again on the next request', async () => {
    let installed = false
    const handler = withDocs(api(), {
      load: async (name) => {
        if (!installed) throw new Error('the package swagger-ui-dist is not installed (npm install swagger-ui-dist)')
        return `/* ${name} */`
      },
    })
    const missing = await call(handler, '/v1/docs', { auth: false })
    assertError(missing, 404, 'not_found')
    assert.match(missing.body.message, /npm install swagger-ui-dist/)
    installed = true
    assert.equal((await get(handler, '/v1/docs')).status, 200)
  })
})

describe('the binary', () => {
  it('serves the page unless --no-docs', () => {
    assert.equal(parseCli([], {}).docs, true)
    assert.equal(parseCli(['--no-docs'], {}).docs, false)
  })
})

it("import 'petstore-server' does not reach the page's modules", () => {
  // The static import graph of the package's main entry, over relative imports.
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = readFileSync(file, 'utf8')
    for (const [, spec] of text.matchAll(/^(?:import|export)\s[^'"]*from\s+'(\.[^']+)'/gm)) {
      visit(resolve(dirname(file), spec!.replace(/\.js$/, '.ts')))
    }
  }
  const src = fileURLToPath(new URL('../src/', import.meta.url))
  visit(join(src, 'index.ts'))
  assert.ok(seen.has(join(src, 'create-petstore.ts')), 'the walk follows imports')
  assert.ok(!seen.has(join(src, 'http', 'docs-page.ts')))
  assert.ok(![...seen].some((file) => readFileSync(file, 'utf8').includes('swagger-ui')))
})
