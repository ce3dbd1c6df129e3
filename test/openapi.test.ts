/**
 * The OpenAPI document, checked two ways: it is a valid OpenAPI 3.1 document
 * that declares every status DESIGN §2 lets an operation answer, and every
 * answer the handler really gives (each operation, each status) matches the
 * schema and headers the document declares for it.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { compileErrors, validate } from '@readme/openapi-parser'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { createPetstore, type FetchHandler, memoryStore, type PetStore, PetstoreError } from '../src/index.js'
import { call, KEY } from './helpers/client.js'

type Init = Parameters<typeof call>[2]

/** Statuses each operation must declare by number (DESIGN §2); 405, 500 and 503 may fall under `default`. */
const STATUSES = {
  'GET /pets': [200, 400, 401],
  'POST /pets': [201, 400, 401, 413, 415],
  'GET /pets/{petId}': [200, 400, 401, 404],
}
const ANYWHERE = [405, 500, 503]

/** Real requests and the status each must get; `on: 'broken'` uses a store that fails. */
const EXCHANGES: { op: keyof typeof STATUSES; url: string; init?: Init; status: number; on?: 'broken' }[] = [
  { op: 'GET /pets', url: '/pets?limit=1', status: 200 },
  { op: 'GET /pets', url: '/pets?status=available&limit=1', status: 200 },
  { op: 'GET /pets', url: '/pets?limit=0', status: 400 },
  { op: 'GET /pets', url: '/pets', init: { auth: false }, status: 401 },
  { op: 'GET /pets', url: '/pets', status: 503, on: 'broken' },
  { op: 'POST /pets', url: '/pets', init: { json: { name: 'Tom', categoryId: 2 } }, status: 201 },
  { op: 'POST /pets', url: '/pets', init: { json: { name: '', categoryId: 'x' } }, status: 400 },
  { op: 'POST /pets', url: '/pets', init: { json: { name: 'Tom', categoryId: 2 }, auth: false }, status: 401 },
  { op: 'POST /pets', url: '/pets', init: { json: { name: 'x'.repeat(2000), categoryId: 1 } }, status: 413 },
  {
    op: 'POST /pets',
    url: '/pets',
    init: { method: 'POST', body: 'name=Tom', headers: { 'content-type': 'text/plain' } },
    status: 415,
  },
  { op: 'GET /pets/{petId}', url: '/pets/1', status: 200 },
  { op: 'GET /pets/{petId}', url: '/pets/3', status: 200 },
  { op: 'GET /pets/{petId}', url: '/pets/abc', status: 400 },
  { op: 'GET /pets/{petId}', url: '/pets/999', status: 404 },
  { op: 'GET /pets/{petId}', url: '/pets/1', status: 500, on: 'broken' },
  // An undeclared method belongs to no operation; it is answered like the path's `default`.
  { op: 'GET /pets/{petId}', url: '/pets/1', init: { method: 'PUT' }, status: 405 },
]

const brokenStore: PetStore = {
  create: async () => {
    throw new Error('disk on fire')
  },
  get: async () => {
    throw new Error('disk on fire')
  },
  list: async () => {
    throw PetstoreError.unavailable()
  },
}

/** A JSON Pointer into the document, as a URI fragment. */
const pointer = (...parts: string[]) =>
  parts.map((part) => `/${encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1'))}`).join('')

/** Compiles validators for any schema the document holds, `$ref`s to its components resolved. */
function schemasOf(doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ajv.addFormat('int64', { type: 'number', validate: Number.isInteger })
  ajv.addFormat('uri-reference', { type: 'string', validate: (value: string) => !/\s/.test(value) })
  ajv.addSchema(structuredClone(doc), 'openapi.json')
  return (...parts: string[]) => ajv.compile({ $ref: `openapi.json#${pointer(...parts)}` })
}

const split = (op: string) => {
  const [method, path] = op.split(' ') as [string, string]
  return { method: method.toLowerCase(), path }
}

async function fetchDocument(handler: FetchHandler, basePath: string): Promise<any> {
  const answer = await call(handler, `${basePath}/openapi.json`, { auth: false })
  assert.equal(answer.status, 200, answer.text)
  assert.equal(answer.headers.get('content-type'), 'application/json')
  return answer.body
}

for (const basePath of ['/v1', '/api/v1']) {
  describe(`OpenAPI document at ${basePath}`, () => {
    const options = { keys: [KEY], basePath, maxBodyBytes: 1024, onError: () => {} }
    let handler: FetchHandler
    let broken: FetchHandler
    let doc: any
    before(async () => {
      const pets = [
        { name: 'Rex', categoryId: 1, status: 'available' as const },
        { name: 'Mia', categoryId: 1, status: 'available' as const },
        { name: 'Bo', categoryId: 3 },
      ]
      handler = createPetstore({ ...options, store: memoryStore({ pets }) })
      broken = createPetstore({ ...options, store: brokenStore })
      doc = await fetchDocument(handler, basePath)
    })

    it('is valid OpenAPI 3.1, served without a key, with the base path as its server', async () => {
      const result = await validate(structuredClone(doc))
      assert.ok(result.valid, compileErrors(result))
      assert.deepEqual(result.warnings, [])
      assert.equal(doc.openapi, '3.1.0')
      assert.deepEqual(doc.servers, [{ url: basePath }])
      assert.deepEqual(Object.keys(doc.paths).sort(), ['/pets', '/pets/{petId}'])
    })

    it('marks getPet deprecated and secures every operation with a bearer scheme', () => {
      assert.equal(doc.paths['/pets/{petId}'].get.operationId, 'getPet')
      assert.equal(doc.paths['/pets/{petId}'].get.deprecated, true)
      assert.notEqual(doc.paths['/pets'].get.deprecated, true)
      for (const op of Object.keys(STATUSES)) {
        const { method, path } = split(op)
        const security = doc.paths[path][method].security ?? doc.security
        assert.ok(security?.length > 0, `${op} has no security`)
        for (const requirement of security) {
          for (const name of Object.keys(requirement)) {
            const scheme = doc.components.securitySchemes[name]
            assert.equal(scheme?.type, 'http', `${op}: ${name}`)
            assert.equal(scheme.scheme.toLowerCase(), 'bearer')
          }
        }
      }
    })

    it('declares every status each operation can answer, errors as the Error schema', () => {
      for (const [op, statuses] of Object.entries(STATUSES)) {
        const { method, path } = split(op)
        const responses = doc.paths[path][method].responses
        for (const status of statuses) assert.ok(responses[status], `${op} does not declare ${status}`)
        for (const status of ANYWHERE) assert.ok(responses[status] ?? responses.default, `${op}: no ${status}`)
        for (const [key, response] of Object.entries<any>(responses)) {
          if (key.startsWith('2')) continue
          const schema = response.content?.['application/json']?.schema
          assert.deepEqual(schema, { $ref: '#/components/schemas/Error' }, `${op} ${key}`)
        }
      }
    })

    it('describes every real answer: body, media type and headers match what it declares', async () => {
      const schema = schemasOf(doc)
      for (const { op, url, init, status, on } of EXCHANGES) {
        const { method, path } = split(op)
        const label = `${op} ${init?.method ?? ''} ${url} → ${status}`
        const answer = await call(on === 'broken' ? broken : handler, `${doc.servers[0].url}${url}`, init)
        assert.equal(answer.status, status, `${label}: ${answer.text}`)
        if (status === 400 && method === 'post') assert.ok(answer.body.details?.length > 0, answer.text)
        const responses = doc.paths[path][method].responses
        const key = String(status) in responses ? String(status) : 'default'
        const response = responses[key]
        assert.ok(response, `${label} is not declared`)
        const [mediaType] = Object.keys(response.content)
        assert.equal(answer.headers.get('content-type'), mediaType, label)
        const body = schema('paths', path, method, 'responses', key, 'content', mediaType!, 'schema')
        assert.ok(body(answer.body), `${label}: ${JSON.stringify(body.errors)} in ${answer.text}`)
        for (const [name, declared] of Object.entries<{ required?: boolean }>(response.headers ?? {})) {
          const value = answer.headers.get(name)
          if (value === null && !declared.required) continue
          assert.ok(value !== null, `${label}: header ${name} is missing`)
          const header = schema('paths', path, method, 'responses', key, 'headers', name, 'schema')
          assert.ok(header(value), `${label}: header ${name}: ${value}`)
        }
      }
    })
  })
}

describe('OpenAPI document: what the linters ask for (npm run lint:openapi lints it)', () => {
  const documentOf = (servers?: { url: string; description?: string }[]) =>
    fetchDocument(createPetstore({ store: memoryStore(), keys: [KEY], servers }), '/v1')

  it('has a license, a contact, and a tag and a description on every operation and parameter', async () => {
    const doc = await documentOf()
    assert.equal(doc.info.license.identifier, 'MIT')
    assert.match(doc.info.contact.url, /^https:\/\//)
    assert.deepEqual(
      doc.tags.map((tag: { name: string }) => tag.name),
      ['pets'],
    )
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        assert.deepEqual(operation.tags, ['pets'], `${method} ${path}: tags`)
        assert.ok(operation.description, `${method} ${path}: description`)
        for (const parameter of operation.parameters ?? []) {
          assert.ok(parameter.description, `${method} ${path}: description of ${parameter.name}`)
        }
      }
    }
  })

  it('lists the `servers` option instead of the relative base path, without trailing slashes', async () => {
    const doc = await documentOf([
      { url: 'https://api.petstore.dev/v1/', description: 'Production' },
      { url: 'https://staging.petstore.dev/v1' },
    ])
    assert.deepEqual(doc.servers, [
      { url: 'https://api.petstore.dev/v1', description: 'Production' },
      { url: 'https://staging.petstore.dev/v1' },
    ])
    const result = await validate(structuredClone(doc))
    assert.ok(result.valid, compileErrors(result))
  })

  it('refuses a server without a url', () => {
    for (const servers of [[{}], [{ url: '' }], [{ url: '/v1', description: 7 }], 'https://x/v1']) {
      assert.throws(() => createPetstore({ store: memoryStore(), keys: [KEY], servers: servers as never }), TypeError)
    }
  })
})

describe('the OpenAPI checks are not vacuous', () => {
  let doc: any
  before(async () => {
    doc = await fetchDocument(createPetstore({ store: memoryStore(), keys: [KEY] }), '/v1')
  })

  it('the parser rejects a document whose path parameter is not declared', async () => {
    const bad = structuredClone(doc)
    bad.paths['/pets/{petId}'].get.parameters = []
    assert.equal((await validate(bad)).valid, false)
  })

  it('the declared schemas reject wrong bodies', () => {
    const schema = schemasOf(doc)
    const pet = schema('components', 'schemas', 'Pet')
    assert.ok(pet({ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }), JSON.stringify(pet.errors))
    assert.equal(pet({ id: '1', name: 'Rex', categoryId: 1 }), false)
    assert.equal(pet({ id: 1, name: 'Rex', categoryId: 1.5 }), false)
    assert.equal(pet({ id: 1, name: 'Rex' }), false)
    assert.equal(pet({ id: 1, name: 'Rex', categoryId: 1, status: 'lost' }), false)
    assert.equal(
      schema('paths', '/pets', 'get', 'responses', '200', 'content', 'application/json', 'schema')([{}]),
      false,
    )
    assert.equal(schema('components', 'schemas', 'Error')({ code: 'x', message: 'y' }), false)
  })

  it('declares categoryId an int64 whose values beyond 2^53 come back exactly, in NewPet and Pet', () => {
    for (const name of ['NewPet', 'Pet']) {
      const categoryId = doc.components.schemas[name].properties.categoryId
      assert.equal(categoryId.type, 'integer')
      assert.equal(categoryId.format, 'int64')
      // No minimum/maximum: as JSON numbers they would read as ±2^63 (rounded), one past the range.
      assert.equal(categoryId.maximum, undefined)
      assert.match(categoryId.description, /-9223372036854775808 to 9223372036854775807.*exactly/)
    }
  })
})
