/**
 * `petstore-server/docs`: the API reference page (Swagger UI) for a handler
 * made by `createPetstore`, with the renderer's files read from the
 * `swagger-ui-dist` package on first use. Node, Bun and Deno all read them
 * through `node:fs`; `import 'petstore-server'` never loads this module.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { normalizeBasePath, trimSlashes } from '../src/http/base-path.js'
import { type DocsAssetLoader, docsRoutes } from '../src/http/docs-page.js'
import { createApiEngine, isApiEngine } from '../src/http/engine.js'
import { engineOf } from '../src/http/exchange.js'
import type { AnyFetchHandler, FetchHandler } from '../src/http/fetch-handler.js'
import { toFetchHandler, toResponse } from '../src/http/fetch-handler.js'
import { createFinish, reporter } from '../src/http/finish.js'
import { parseTarget } from '../src/http/request-target.js'
import { RouteTable } from '../src/http/route-table.js'
import { fromRequest } from '../src/http/web-request.js'
import { knownOptions, optionalFunction, optionsObject, shown } from '../src/util/option-checks.js'

export { DOCS_CSP, type DocsAsset, type DocsAssetLoader } from '../src/http/docs-page.js'
export type { AnyFetchHandler as FetchHandler } from '../src/http/fetch-handler.js'

/** Options of {@link withDocs}. */
export interface WithDocsOptions {
  /**
   * The base path given to `createPetstore`: the page is at `{basePath}/docs`.
   * @default the base path of `createPetstore`'s handler, else '/v1'
   */
  basePath?: string | undefined
  /** Where the renderer's files come from. @default swaggerUiAssets() */
  load?: DocsAssetLoader | undefined
}

/**
 * Reads Swagger UI's files from the installed `swagger-ui-dist` package, when
 * first asked. Its absence is told on the page's URL, as a JSON error naming
 * the package to install.
 */
export function swaggerUiAssets(): DocsAssetLoader {
  let directory: Promise<string> | undefined
  return async (name) => {
    directory ??= import('swagger-ui-dist/absolute-path.js' as string).then(
      (module: { default: () => string }) => module.default(),
      (error: unknown) => {
        directory = undefined
        throw new Error('the package swagger-ui-dist is not installed (npm install swagger-ui-dist)', { cause: error })
      },
    )
    return readFile(join(await directory, name), 'utf8')
  }
}

/**
 * `handler`, plus an interactive API reference at `{basePath}/docs`: viewing
 * it needs no key; its "Authorize" button takes one for "try it", which calls
 * this same server. Everything else goes to `handler` unchanged (a handler of
 * `createPetstore` keeps the Node adapter's direct path).
 *
 * @example
 * ```ts
 * import { createPetstore, memoryStore } from 'petstore-server'
 * import { withDocs } from 'petstore-server/docs'
 * import { serve } from 'petstore-server/node'
 *
 * await serve({ handler: withDocs(createPetstore({ store: memoryStore(), keys: ['secret'] })) })
 * // → http://127.0.0.1:8080/v1/docs
 * ```
 */
export function withDocs(handler: AnyFetchHandler, options: WithDocsOptions = {}): FetchHandler {
  const owner = 'withDocs'
  if (typeof handler !== 'function') {
    throw new TypeError(`${owner}: handler must be a fetch handler, such as createPetstore's; got ${shown(handler)}`)
  }
  optionsObject(owner, 'options', options, '{ basePath?, load? }')
  knownOptions(owner, options, ['basePath', 'load'])
  const basePath = options.basePath === undefined ? undefined : normalizeBasePath(owner, options.basePath)
  const engine = engineOf(handler)
  const routes = docsRoutes(
    basePath ?? (isApiEngine(engine) ? engine.basePath : '/v1'),
    optionalFunction(owner, 'load', options.load) ?? swaggerUiAssets(),
  )
  // createPetstore's handler serves the page from its own table, finished like its other answers.
  if (isApiEngine(engine)) return toFetchHandler(engine.withRoutes(routes))
  // Another handler: the page's route before it, and every other request to it untouched.
  const table = new RouteTable(routes)
  const docs = createApiEngine({
    table,
    basePath: routes[0]?.path ?? '',
    cors: undefined,
    authenticate: () => undefined,
    finish: createFinish(undefined, reporter(undefined), undefined),
  })
  return async (request) => {
    let path: string
    try {
      path = trimSlashes(parseTarget(request.url).pathname)
    } catch {
      return handler(request)
    }
    return table.match(path, request.method) === undefined
      ? handler(request)
      : toResponse(await docs(fromRequest(request)))
  }
}
