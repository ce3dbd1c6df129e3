// Serves this example on http://127.0.0.1:8080: index.html, app.ts bundled for the browser by
// esbuild, and MSW's service worker read from the installed msw package (never copied).
//
//   node --import tsx examples/msw/serve.ts
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url))

/** The page's three files, by path, with their content types. */
async function files(): Promise<Map<string, { type: string; body: string }>> {
  const bundled = await build({
    entryPoints: [here('./app.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  const worker = fileURLToPath(import.meta.resolve('msw/mockServiceWorker.js'))
  const script = 'text/javascript; charset=utf-8'
  return new Map([
    ['/', { type: 'text/html; charset=utf-8', body: await readFile(here('./index.html'), 'utf8') }],
    ['/app.js', { type: script, body: bundled.outputFiles[0]?.text ?? '' }],
    // At the root, so that the worker's scope covers the page.
    ['/mockServiceWorker.js', { type: script, body: await readFile(worker, 'utf8') }],
  ])
}

/** Starts the example's server on 127.0.0.1 (a secure context, as service workers need). */
export async function serveExample(port = 8080): Promise<{ url: string; close: () => Promise<void> }> {
  const served = await files()
  const server = createServer((request, response) => {
    const file = served.get(new URL(request.url ?? '/', 'http://x').pathname)
    if (!file) return response.writeHead(404).end('not found')
    response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await serveExample()
  console.log(`open ${url}`)
}
