/**
 * The API reference page at `{basePath}/docs`: Swagger UI over the served
 * OpenAPI document. This module holds the page, its script, its
 * Content-Security-Policy and its routes; the renderer's files come from a
 * loader (see `petstore-server/docs`, which reads them from the
 * `swagger-ui-dist` package), so the core reads no file itself.
 *
 * @module
 */

import { errorAnswer, PetstoreError } from '../api/errors.js'
import { trimSlashes } from './base-path.js'
import { type ApiAnswer, type ApiRequest, type Engine, headAnswer } from './exchange.js'
import { setDefaults } from './headers.js'
import { type OnResponse, tell } from './observe.js'
import { requestId } from './request-id.js'
import { parseTarget } from './request-target.js'

/** The renderer's files the page needs. */
export const DOCS_ASSETS = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const
export type DocsAsset = (typeof DOCS_ASSETS)[number]

/** Reads one of the renderer's files, as text. */
export type DocsAssetLoader = (name: DocsAsset) => Promise<string>

/**
 * Everything from this origin, nothing inline, no eval. `data:` images are
 * the icons inside swagger-ui.css. `connect-src 'self'` is what keeps "try
 * it" (and the key typed in) on this server. No framing, no forms, no base.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Text safe inside a double-quoted HTML attribute. */
const attribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The page: no inline script or style, so the CSP needs neither. */
function page(prefix: string): string {
  const at = attribute(prefix)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Petstore API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${at}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${at}/swagger-ui-bundle.js"></script>
<script src="${at}/init.js"></script>
</body>
</html>
`
}

/**
 * The page's script. The base layout has no URL bar (that would fetch any
 * document), no validator badge (a call to another site), and the key typed
 * into "Authorize" is not kept in localStorage.
 */
function init(documentUrl: string): string {
  const config = {
    url: documentUrl,
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayOperationId: true,
    validatorUrl: null,
    persistAuthorization: false,
  }
  // `<` escaped: the text stays inert wherever it ends up.
  const json = JSON.stringify(config, null, 2).replace(/</g, '\\u003c')
  return `'use strict'
window.ui = SwaggerUIBundle(${json})
`
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

/** Options of {@link withDocsEngine}. */
export interface DocsOptions {
  /** The API's base path, as given to `createPetstore`: the page is at `{basePath}/docs`. */
  basePath: string
  /** Reads the renderer's files; called once per file, on first use. */
  load: DocsAssetLoader
  /** Told of the page's answers too, as the API's (`createPetstore`'s `onResponse`). */
  onResponse?: OnResponse | undefined
}

/**
 * `engine`, plus the reference page and its files under `{basePath}/docs`.
 * They need no key; everything else goes to `engine` untouched.
 */
export function withDocsEngine(engine: Engine, { basePath, load, onResponse }: DocsOptions): Engine {
  const base = trimSlashes(basePath)
  const prefix = `${base}/docs`
  const pagePrefix = `${prefix}/`
  const assets = DOCS_ASSETS.map((name) => [name, cached(() => load(name))] as const)
  const files = new Map<string, () => Promise<string>>([
    // Loading the page checks that the renderer is there, so that a missing package gets one clear answer.
    ['', () => Promise.all(assets.map(([, file]) => file())).then(() => page(prefix))],
    ['init.js', async () => init(`${base}/openapi.json`)],
    ...assets,
  ])

  // Like every answer of the API's own: a request id, and told to the hook (the access log, metrics).
  const served = async (request: ApiRequest, name: string) => {
    const started = performance.now()
    const file = files.get(name)
    const answer = await serve(request, file, name)
    const id = requestId(request.header('x-request-id'))
    answer.headers['x-request-id'] = id
    if (request.method === 'HEAD') headAnswer(answer)
    if (onResponse) tell(onResponse, answer, request, id, file === undefined ? null : prefix, started)
    return answer
  }
  // Not an async function: the API's own answers pass through as they come, at once when they are ready.
  return (request) => {
    // A cheap look first: the API's own requests should not pay for a URL parse. An origin-form
    // target (`/v1/docs/…`) begins with its path, so `startsWith`, not a search through the whole
    // target (~350 instructions of every API request, callgrind). A path the URL parser would
    // rewrite into the page's (`/x/../v1/docs`) is the API's to refuse, as for /healthz.
    const { target } = request
    if (target === undefined ? !request.url.includes(prefix) : !target.startsWith(prefix)) return engine(request)
    let pathname: string
    try {
      pathname = parseTarget(request.url).pathname
    } catch {
      return engine(request)
    }
    if (pathname !== prefix && !pathname.startsWith(pagePrefix)) return engine(request)
    return served(request, pathname.slice(prefix.length + 1))
  }
}

/** One file, or the error that says why not. */
async function serve(request: ApiRequest, file: (() => Promise<string>) | undefined, name: string): Promise<ApiAnswer> {
  let answer: ApiAnswer
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    answer = errorAnswer(
      new PetstoreError(405, 'method_not_allowed', 'Method not allowed; use GET, HEAD', {
        headers: { allow: 'GET, HEAD' },
      }),
    )
  } else if (!file) {
    answer = errorAnswer(new PetstoreError(404, 'not_found', 'No such route'))
  } else {
    try {
      const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? TYPES.html
      answer = { status: 200, headers: { 'content-type': type as string }, body: await file() }
    } catch (error) {
      const message = `The API reference is not available: ${(error as Error)?.message ?? error}`
      answer = errorAnswer(new PetstoreError(404, 'not_found', message))
    }
  }
  setDefaults(answer.headers)
  answer.headers['content-security-policy'] = DOCS_CSP
  answer.headers['referrer-policy'] = 'no-referrer'
  // The renderer's files change only with the package: a browser may keep them a while.
  if (answer.status === 200 && name !== '' && name !== 'init.js') answer.headers['cache-control'] = 'max-age=3600'
  return answer
}

/** `load` once; a failure is not kept, so installing the package later helps without a restart. */
function cached(load: () => Promise<string>): () => Promise<string> {
  let text: Promise<string> | undefined
  return () => {
    text ??= load().catch((error) => {
      text = undefined
      throw error
    })
    return text
  }
}
