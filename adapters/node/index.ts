/**
 * `petstore-server/node`: mounting a fetch handler on Node's `node:http`
 * ({@link toNodeListener}), or serving it with limits fit for a server
 * exposed as it is ({@link serve}).
 *
 * @module
 */
export type { AnyFetchHandler as FetchHandler } from '../../src/http/fetch-handler.js'
export { type NodeListener, toNodeListener } from './listener.js'
export { type RunningServer, type ServeOptions, serve } from './serve.js'
