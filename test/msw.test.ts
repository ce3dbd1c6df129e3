/**
 * petstore-server/msw under msw's setupServer in Node: requests made with the
 * global fetch, answered by the real handler inside MSW. A node:http server on
 * 127.0.0.1 is the "real" origin, so what MSW does not intercept is seen to
 * reach it. The browser side is test/msw-browser.test.ts.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, beforeEach, describe, it } from 'node:test'
import { setupServer } from 'msw/node'
import { petstoreHandlers } from '../adapters/msw.js'
import { memoryStore } from '../src/index.js'
import { underCi } from './helpers/ci.js'
import { nextLink } from './helpers/client.js'
import { repoRoot } from './helpers/spawn-server.js'

const KEY = 'msw-key'
const auth = { authorization: `Bearer ${KEY}` }
const OTHER = 'https://other.example.test/api/v2'

let origin: Server
let baseUrl: string
let realOrigin: string
const unhandled: string[] = []

// The "real" server: whatever it answers was not intercepted.
before(async () => {
  origin = createServer((request, response) => response.end(`real ${request.url}`))
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  realOrigin = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  baseUrl = `${realOrigin}/v1`
})
after(() => origin.close())

const post = (url: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('petstoreHandlers under setupServer', () => {
  // Built in before(): baseUrl holds the real server's port.
  let server: ReturnType<typeof setupServer>
  before(() => {
    server = setupServer(
      ...petstoreHandlers({ baseUrl, keys: [KEY] }),
      ...petstoreHandlers({
        baseUrl: OTHER,
        keys: [KEY],
        store: memoryStore({ pets: [{ name: 'Seed', categoryId: 9 }] }),
      }),
    )
    server.listen({ onUnhandledRequest: (request) => void unhandled.push(`${request.method} ${request.url}`) })
  })
  after(() => server.close())
  beforeEach(() => {
    unhandled.length = 0
  })

  it('lists, creates and gets pets, with the real answers', async () => {
    const empty = await fetch(`${baseUrl}/pets`, { headers: auth })
    assert.equal(empty.status, 200)
    assert.deepEqual(await empty.json(), [])

    const created = await post(`${baseUrl}/pets`, { name: 'Rex', categoryId: 1, status: 'available' })
    assert.equal(created.status, 201)
    const pet = await created.json()
    assert.deepEqual(pet, { id: 1, name: 'Rex', categoryId: 1, status: 'available' })
    assert.equal(created.headers.get('location'), '/v1/pets/1')
    assert.match(created.headers.get('x-request-id') ?? '', /./)

    const got = await fetch(new URL(created.headers.get('location')!, baseUrl), { headers: auth })
    assert.equal(got.status, 200)
    assert.deepEqual(await got.json(), pet)

    const listed = await fetch(`${baseUrl}/pets?status=available`, { headers: auth })
    assert.deepEqual(await listed.json(), [pet])
    assert.deepEqual(unhandled, [])
  })

  it('answers 401 without a key or with a wrong one', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const response = await fetch(`${baseUrl}/pets`, { headers })
      assert.equal(response.status, 401)
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/)
      assert.equal((await response.json()).code, 'unauthorized')
    }
  })

  it('answers 400 to an invalid pet and to a malformed query, naming the field', async () => {
    const invalid = await post(`${baseUrl}/pets`, { name: '', categoryId: 'one' })
    assert.equal(invalid.status, 400)
    const body = await invalid.json()
    assert.equal(body.code, 'validation_error')
    assert.deepEqual(
      body.details.map((detail: { path: string }) => detail.path),
      ['name', 'categoryId'],
    )
    const query = await fetch(`${baseUrl}/pets?limit=0`, { headers: auth })
    assert.equal(query.status, 400)
  })

  it('answers 404 to a pet that does not exist and to a path the API does not have', async () => {
    const missing = await fetch(`${baseUrl}/pets/424242`, { headers: auth })
    assert.equal(missing.status, 404)
    assert.equal((await missing.json()).code, 'not_found')
    // Under baseUrl, so the API answers it, as createPetstore alone would.
    const docs = await fetch(`${baseUrl}/docs`, { headers: auth })
    assert.equal(docs.status, 404)
    // The key comes first, as docs/msw.md says: without one, the same path is a 401.
    const keyless = await fetch(`${baseUrl}/docs`)
    assert.equal(keyless.status, 401)
    assert.equal((await keyless.json()).code, 'unauthorized')
    assert.deepEqual(unhandled, [])
  })

  it('pages through the list by following Link rel="next", resolved against baseUrl', async () => {
    for (let i = 0; i < 6; i++)
      assert.equal((await post(`${baseUrl}/pets`, { name: `Page${i}`, categoryId: 2 })).status, 201)
    const all = await (await fetch(`${baseUrl}/pets?limit=100`, { headers: auth })).json()
    const pages: number[][] = []
    let url: string | undefined = `${baseUrl}/pets?limit=3`
    while (url) {
      const response: Response = await fetch(url, { headers: auth })
      assert.equal(response.status, 200)
      pages.push((await response.json()).map((pet: { id: number }) => pet.id))
      const next = nextLink(response.headers)
      if (next) assert.ok(next.startsWith('/v1/pets?'), `a relative link: ${next}`)
      url = next && new URL(next, baseUrl).href
    }
    assert.ok(pages.length >= 3, `${pages.length} pages`)
    assert.ok(pages.every((page) => page.length <= 3))
    assert.deepEqual(
      pages.flat(),
      all.map((pet: { id: number }) => pet.id),
    )
  })

  it('serves openapi.json without a key, its servers relative to baseUrl', async () => {
    const response = await fetch(`${baseUrl}/openapi.json`)
    assert.equal(response.status, 200)
    const document = await response.json()
    assert.equal(document.openapi, '3.1.0')
    assert.deepEqual(document.servers, [{ url: '/v1' }])
  })

  it('keeps the state of two handler sets apart', async () => {
    const seeded = await (await fetch(`${OTHER}/pets`, { headers: auth })).json()
    assert.deepEqual(
      seeded.map((pet: { name: string }) => pet.name),
      ['Seed'],
    )
    assert.equal((await post(`${OTHER}/pets`, { name: 'Elsewhere', categoryId: 3 })).status, 201)
    assert.equal(
      (await post(`${OTHER}/pets`, { name: 'Elsewhere', categoryId: 3 })).headers.get('location'),
      '/api/v2/pets/3',
    )
    const here = await (await fetch(`${baseUrl}/pets?limit=100`, { headers: auth })).json()
    assert.ok(
      here.every((pet: { name: string }) => pet.name !== 'Elsewhere' && pet.name !== 'Seed'),
      JSON.stringify(here),
    )
    // Each handler signs its own cursors: one from the other set is refused.
    const page = await fetch(`${baseUrl}/pets?limit=1`, { headers: auth })
    const next = new URL(nextLink(page.headers)!, baseUrl)
    const foreign = await fetch(`${OTHER}/pets${next.search}`, { headers: auth })
    assert.equal(foreign.status, 400)
  })

  it('leaves requests outside baseUrl to MSW, which lets them through to the real server', async () => {
    for (const path of ['/', '/healthz', '/v1x/pets', '/v2/pets']) {
      const response = await fetch(`${realOrigin}${path}`, { headers: auth })
      assert.equal(await response.text(), `real ${path}`)
    }
    assert.deepEqual(
      unhandled,
      ['GET /', 'GET /healthz', 'GET /v1x/pets', 'GET /v2/pets'].map((line) => line.replace(' /', ` ${realOrigin}/`)),
    )
  })
})

describe('petstoreHandlers options', () => {
  it('takes basePath when it agrees with baseUrl, and refuses a contradiction', () => {
    assert.equal(petstoreHandlers({ baseUrl: 'https://x.test/api/v1/', basePath: '/api/v1', keys: [KEY] }).length, 1)
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://x.test/v1', basePath: '/api', keys: [KEY] }),
      /^TypeError: petstoreHandlers: basePath "\/api" contradicts baseUrl "https:\/\/x.test\/v1", whose path is "\/v1"/,
    )
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://x.test', basePath: '/v1', keys: [KEY] }),
      /whose path is "\/"/,
    )
  })

  it('refuses a baseUrl that is not an absolute http(s) URL of plain segments', () => {
    for (const baseUrl of ['/v1', 'api.example.test/v1', 'ftp://x.test/v1', undefined]) {
      assert.throws(
        () => petstoreHandlers({ baseUrl, keys: [KEY] } as never),
        /^TypeError: petstoreHandlers: baseUrl must be an absolute http\(s\) URL/,
      )
    }
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://x.test/v1?a=1', keys: [KEY] }),
      /without a user, password, \? or #/,
    )
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://user:secret@x.test/v1', keys: [KEY] }),
      (error: Error) => !error.message.includes('secret') && /without a user/.test(error.message),
    )
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://x.test/v%201', keys: [KEY] }),
      /the path of baseUrl must be a path of plain segments/,
    )
  })

  it('passes the rest to createPetstore, which checks it', () => {
    assert.throws(() => petstoreHandlers({ baseUrl: 'https://x.test/v1', keys: [] }), /keys/)
    assert.throws(
      () => petstoreHandlers({ baseUrl: 'https://x.test/v1', keys: [KEY], basepath: '/v1' } as never),
      /did you mean "basePath"/,
    )
  })
})

describe('petstore-server/msw in a browser bundle', () => {
  /** `entry` bundled as a browser app's bundler would, with its metafile. */
  async function bundle(entry: string, external = false) {
    const { build } = await import('esbuild')
    return build({
      entryPoints: [join(repoRoot, entry)],
      absWorkingDir: repoRoot,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      metafile: true,
      write: false,
      logLevel: 'silent',
      ...(external ? { packages: 'external' as const } : {}),
    })
  }
  // The built entries exist once `npm run build` has run, as under CI.
  const built = existsSync(join(repoRoot, 'dist/msw.js'))
  if (!built && underCi) throw new Error('no dist/msw.js under CI: run npm run build first')
  const entries = ['adapters/msw.ts', ...(built ? ['dist/msw.js'] : [])]

  for (const entry of entries) {
    it(`${entry} builds for the browser, with no node: import and none of the Node side`, async (t) => {
      const result = await bundle(entry)
      const inputs = Object.keys(result.metafile.inputs)
      const bytes = result.outputFiles[0]?.contents.length ?? 0
      t.diagnostic(`${bytes} bytes minified, msw included; ${inputs.length} input files`)
      const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((each) => each.path))
      assert.deepEqual(
        [...inputs, ...imports].filter((path) => path.startsWith('node:')),
        [],
      )
      const nodeSide =
        /(^|\/)(adapters\/(node|docs)|bin\/|node_modules\/(msw\/lib\/node|pg|better-sqlite3|mysql2|@whatwg-node|kysely|swagger-ui-dist)\/)/
      assert.deepEqual(
        inputs.filter((input) => nodeSide.test(input)),
        [],
      )
      assert.ok(inputs.some((input) => input.startsWith('node_modules/msw/')))
    })
  }

  it(`the main entry imports no msw (${built ? 'src/index.ts and dist/index.js' : 'src/index.ts; dist/ not built'})`, async () => {
    for (const entry of ['src/index.ts', ...(built ? ['dist/index.js'] : [])]) {
      const result = await bundle(entry, true)
      const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((each) => each.path))
      assert.deepEqual(
        imports.filter((path) => /^msw(\/|$)/.test(path)),
        [],
        entry,
      )
      assert.ok(imports.includes('valibot'), `${entry}: the check sees the packages it imports`)
    }
  })
})

describe('petstoreHandlers with namespaces', () => {
  const NS_ORIGIN = 'https://namespaces.example.test'
  let server: ReturnType<typeof setupServer>
  before(() => {
    server = setupServer(
      ...petstoreHandlers({
        baseUrl: `${NS_ORIGIN}/v1`,
        keys: [KEY],
        store: memoryStore({ pets: [{ name: 'Seed', categoryId: 9 }] }),
        namespaces: { max: 2 },
      }),
    )
    server.listen({ onUnhandledRequest: 'error' })
  })
  after(() => server.close())

  it('serves each namespace from the seed, with its reset, up to its bound', async () => {
    const made = await post(`${NS_ORIGIN}/ns/first/v1/pets`, { name: 'Kit', categoryId: 1 })
    assert.equal(made.status, 201)
    assert.equal(made.headers.get('location'), '/ns/first/v1/pets/2')
    const names = async (prefix: string) =>
      ((await (await fetch(`${NS_ORIGIN}${prefix}/v1/pets`, { headers: auth })).json()) as { name: string }[]).map(
        (pet) => pet.name,
      )
    assert.deepEqual(await names('/ns/first'), ['Seed', 'Kit'])
    assert.deepEqual(await names('/ns/second'), ['Seed'])
    assert.deepEqual(await names(''), ['Seed'])
    const reset = await fetch(`${NS_ORIGIN}/ns/first/__petstore/reset`, { method: 'POST', headers: auth })
    assert.equal(reset.status, 204)
    assert.deepEqual(await names('/ns/first'), ['Seed'])
    assert.equal((await fetch(`${NS_ORIGIN}/ns/third/v1/pets`, { headers: auth })).status, 507)
    const defaultReset = await fetch(`${NS_ORIGIN}/__petstore/reset`, { method: 'POST', headers: auth })
    assert.equal(defaultReset.status, 204)
  })

  it('needs a store of this package', () => {
    const own = { create: async () => ({}), get: async () => undefined, list: async () => [] }
    assert.throws(
      () => petstoreHandlers({ baseUrl: `${NS_ORIGIN}/v1`, keys: [KEY], store: own as never, namespaces: true }),
      /namespaces need a store this package made/,
    )
  })
})
