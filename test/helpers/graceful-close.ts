/**
 * The graceful close of one adapter, on the runtime that runs this file
 * (for test/runtimes.test.ts):
 *
 *   node --import tsx test/helpers/graceful-close.ts node
 *   bun test/helpers/graceful-close.ts bun
 *   deno run --allow-net --allow-read test/helpers/graceful-close.ts deno
 *
 * Asserts that close() lets a request in flight finish, refuses new
 * connections, is not held open by an idle keep-alive connection nor by one
 * whose upload was answered early (413) and ends after the call, and resolves
 * by `shutdownTimeoutMs` even while a request never ends. Prints
 * `ok` and exits 0; a failed assertion exits non-zero. Only node: modules
 * that Bun and Deno also have are used here.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import process from 'node:process'

const [name] = process.argv.slice(2)
if (name !== 'node' && name !== 'bun' && name !== 'deno') throw new Error('usage: graceful-close.ts node|bun|deno')
const { serve } = await import(name === 'node' ? '../../adapters/node/index.ts' : `../../adapters/${name}.ts`)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Resolves with what `promise` settled to, or `'pending'` after `ms`. */
const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, sleep(ms).then(() => 'pending' as const)])

let release = () => {}
const gate = new Promise<void>((resolve) => {
  release = resolve
})
let arrived = () => {}
const slowArrived = new Promise<void>((resolve) => {
  arrived = resolve
})

async function handler(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url)
  if (pathname === '/slow') {
    arrived()
    await gate
    return new Response('finished')
  }
  if (pathname === '/never') await new Promise(() => {})
  return new Response('fast')
}

// A request in flight finishes; new connections are refused; an idle connection does not hold close() open.
{
  const server = await serve({ handler, port: 0 })
  const origin = `http://127.0.0.1:${server.port}`
  // Leaves an idle keep-alive connection behind (fetch pools it).
  assert.equal(await (await fetch(`${origin}/fast`)).text(), 'fast')
  const slow = fetch(`${origin}/slow`).then((response) => response.text())
  await slowArrived
  let closed = false
  const closing = server.close().then(() => {
    closed = true
  })
  await sleep(100)
  await assert.rejects(fetch(`${origin}/fast`, { headers: { connection: 'close' } }), 'refused after close()')
  assert.equal(closed, false, 'close() waits for the request in flight')
  release()
  assert.equal(await slow, 'finished')
  assert.notEqual(await within(closing, 3_000), 'pending', 'close() resolves once the request finished')
}

// A request that never ends does not hold close() beyond shutdownTimeoutMs.
{
  const server = await serve({ handler, port: 0, shutdownTimeoutMs: 300 })
  const never = fetch(`http://127.0.0.1:${server.port}/never`).catch(() => 'cut')
  await sleep(100)
  const started = Date.now()
  assert.notEqual(await within(server.close(), 3_000), 'pending', 'close() resolves by shutdownTimeoutMs')
  assert.ok(Date.now() - started >= 250, 'close() waited for the request first')
  // Deno cannot cut the connection (see adapters/deno.ts): it ends with the process.
  if (name !== 'deno') assert.equal(await within(never, 3_000), 'cut')
}

// An upload answered before it was read (a 413) and still arriving when close() is called does not
// hold close() open once it has arrived: the client keeps its connection, as keep-alive clients do.
{
  const refuse = async () => new Response('too large', { status: 413 })
  const server = await serve({ handler: refuse, port: 0, shutdownTimeoutMs: 5_000 })
  const socket = connect(server.port, '127.0.0.1')
  await once(socket, 'connect')
  const size = 1_000_000
  socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`)
  socket.write('x'.repeat(size / 4))
  const [answer] = await once(socket, 'data')
  assert.match(String(answer), /^HTTP\/1\.1 413/)
  const closing = server.close()
  await sleep(100)
  socket.write('x'.repeat(size - size / 4))
  const result = await within(closing, 3_000)
  socket.destroy()
  // Bun's stop() waits for such a connection until the client closes it (see the README).
  if (name !== 'bun') assert.notEqual(result, 'pending', 'close() resolved once the upload had arrived')
}

console.log('ok')
process.exit(0)
