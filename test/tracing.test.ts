/**
 * OpenTelemetry spans, recorded by the SDK's in-memory exporter: a server span per
 * request with the HTTP attributes, and a store's own spans as its children.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { serve } from '../adapters/node/index.js'
import { createPetstore, memoryStore, type PetStore } from '../src/index.js'
import { loadTracing } from '../src/shared/tracing.js'
import { KEY } from './helpers/client.js'

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const contextManager = new AsyncLocalStorageContextManager()

before(async () => {
  context.setGlobalContextManager(contextManager.enable())
  trace.setGlobalTracerProvider(provider)
  await loadTracing()
})
after(() => {
  trace.disable()
  context.disable()
})

/** A store that, like an instrumented driver, makes a span of its own for each call. */
function spanningStore(inner: PetStore): PetStore {
  const tracer = trace.getTracer('test-store')
  const wrap =
    <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
    (...args: A) =>
      tracer.startActiveSpan(`store ${name}`, async (span) => {
        try {
          return await call(...args)
        } finally {
          span.end()
        }
      })
  return {
    create: wrap('create', inner.create.bind(inner)),
    get: wrap('get', inner.get.bind(inner)),
    list: wrap('list', inner.list.bind(inner)),
  }
}

const parentOf = (span: { parentSpanContext?: { spanId: string }; parentSpanId?: string }) =>
  span.parentSpanContext?.spanId ?? span.parentSpanId

describe('tracing', () => {
  it('makes a server span per request over a real socket, with the store’s spans as children', async () => {
    exporter.reset()
    const handler = createPetstore({ store: spanningStore(memoryStore()), keys: [KEY] })
    const server = await serve({ handler, port: 0 })
    try {
      const auth = { authorization: `Bearer ${KEY}` }
      const list = await fetch(`http://127.0.0.1:${server.port}/v1/pets?limit=5`, { headers: auth })
      await list.arrayBuffer()
      const missing = await fetch(`http://127.0.0.1:${server.port}/v1/pets/999`, { headers: auth })
      await missing.arrayBuffer()
      const nowhere = await fetch(`http://127.0.0.1:${server.port}/v1/nowhere`, { headers: auth })
      await nowhere.arrayBuffer()
    } finally {
      await server.close()
    }
    const spans = exporter.getFinishedSpans()
    const servers = spans.filter((span) => span.kind === SpanKind.SERVER)
    assert.deepEqual(
      servers.map((span) => [span.name, span.attributes]),
      [
        [
          'GET /v1/pets',
          {
            'http.request.method': 'GET',
            'url.path': '/v1/pets',
            'http.route': '/v1/pets',
            'http.response.status_code': 200,
          },
        ],
        [
          'GET /v1/pets/{petId}',
          {
            'http.request.method': 'GET',
            'url.path': '/v1/pets/999',
            'http.route': '/v1/pets/{petId}',
            'http.response.status_code': 404,
          },
        ],
        ['GET', { 'http.request.method': 'GET', 'url.path': '/v1/nowhere', 'http.response.status_code': 404 }],
      ],
    )
    const [listSpan, getSpan] = servers
    const children = spans.filter((span) => span.name.startsWith('store '))
    assert.deepEqual(
      children.map((span) => [span.name, parentOf(span)]),
      [
        ['store list', listSpan?.spanContext().spanId],
        ['store get', getSpan?.spanContext().spanId],
      ],
    )
    for (const child of children)
      assert.equal(child.spanContext().traceId, servers[children.indexOf(child)]?.spanContext().traceId)
  })

  it('marks a 5xx with error.type and an error status', async () => {
    exporter.reset()
    const failing: PetStore = {
      create: async () => {
        throw new Error('down')
      },
      get: async () => {
        throw new Error('down')
      },
      list: async () => {
        throw new Error('down')
      },
    }
    const handler = createPetstore({ store: failing, keys: [KEY], onError: () => {} })
    const answer = await handler(new Request('http://x/v1/pets', { headers: { authorization: `Bearer ${KEY}` } }))
    assert.equal(answer.status, 500)
    const [span] = exporter.getFinishedSpans()
    assert.equal(span?.attributes['error.type'], 'internal_error')
    assert.equal(span?.attributes['http.response.status_code'], 500)
    assert.equal(span?.status.code, SpanStatusCode.ERROR)
  })
})
