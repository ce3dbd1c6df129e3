/**
 * The API's routes: its three operations and its OpenAPI document.
 *
 * @module
 */
import { jsonAnswer } from '../http/exchange.js'
import { deprecationHeaders } from '../http/headers.js'
import type { Route } from '../http/route-table.js'
import { createPet, getPet, listPets, type OperationContext } from './operations.js'

/** The API's operationIds, as the OpenAPI document names them: what the request journal files requests under. */
export const OPERATIONS = ['listPets', 'createPet', 'getPet'] as const

/**
 * The routes of the API under `context.basePath`. `GET /pets/{petId}` is
 * deprecated: every answer to a read of it carries the deprecation headers.
 * The document, `documentText`, is served without a key.
 */
export function apiRoutes(context: OperationContext, documentText: string): Route[] {
  const { basePath } = context
  return [
    {
      method: 'GET',
      path: `${basePath}/pets`,
      operation: 'listPets',
      handler: (request) => listPets(request.parsed, context, request.signal),
    },
    {
      method: 'POST',
      path: `${basePath}/pets`,
      operation: 'createPet',
      handler: (request) => createPet(request, context),
    },
    {
      method: 'GET',
      path: `${basePath}/pets/{petId}`,
      operation: 'getPet',
      handler: (request, petId) => getPet(petId, context, request.signal),
      setHeaders: deprecationHeaders(basePath),
    },
    { method: 'GET', path: `${basePath}/openapi.json`, handler: () => jsonAnswer(documentText), open: true },
  ]
}
