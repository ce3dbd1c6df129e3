/**
 * The API reference page at `{basePath}/docs`: Swagger UI over the served
 * OpenAPI document. This module holds the page, its script, its
 * Content-Security-Policy and its routes; the renderer's files come from a
 * loader (see `petstore-server/docs`, which reads them from the
 * `swagger-ui-dist` package), so the core reads no file itself.
 *
 * @module
 */

import { PetstoreError } from '../shared/petstore-error.js'
import { trimSlashes } from './base-path.js'
import { errorAnswer, fixedAnswer } from './errors.js'
import type { ApiAnswer } from './exchange.js'
import type { Route } from './route-table.js'

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

/**
 * The reference page and its files under `{basePath}/docs`, as a route: no
 * key needed, and every answer under the page's Content-Security-Policy.
 * `load` reads the renderer's files, once each, on first use.
 */
export function docsRoutes(basePath: string, load: DocsAssetLoader): Route[] {
  const base = trimSlashes(basePath)
  const prefix = `${base}/docs`
  const assets = DOCS_ASSETS.map((name) => [name, cached(() => load(name))] as const)
  const files = new Map<string, () => Promise<string>>([
    // Loading the page checks that the renderer is there, so that a missing package gets one clear answer.
    ['', () => Promise.all(assets.map(([, file]) => file())).then(() => page(prefix))],
    ['init.js', async () => init(`${base}/openapi.json`)],
    ...assets,
  ])
  const headers = { 'content-security-policy': DOCS_CSP, 'referrer-policy': 'no-referrer' }
  const fileRoute = (name: string): Route => ({
    method: 'GET',
    path: name === '' ? prefix : `${prefix}/${name}`,
    handler: () => serve(files.get(name) as () => Promise<string>, name),
    name: prefix,
    open: true,
    headers,
  })
  return [
    ...[...files.keys()].map(fileRoute),
    // Any other file is a 404 that names no route, with no key asked for it.
    { method: 'GET', path: prefix, handler: async () => noFile(), below: true, name: null, open: true, headers },
  ]
}

const noFile = fixedAnswer(new PetstoreError(404, 'not_found', 'No such route'))

/** One file, or the error that says why not. */
async function serve(file: () => Promise<string>, name: string): Promise<ApiAnswer> {
  let body: string
  try {
    body = await file()
  } catch (error) {
    const message = `The API reference is not available: ${(error as Error)?.message ?? error}`
    return errorAnswer(new PetstoreError(404, 'not_found', message))
  }
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? TYPES.html
  const headers: Record<string, string> = { 'content-type': type as string }
  // The renderer's files change only with the package: a browser may keep them a while.
  if (name !== '' && name !== 'init.js') headers['cache-control'] = 'max-age=3600'
  return { status: 200, headers, body }
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
