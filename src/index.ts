/**
 * petstore-server: the Petstore v1 API as a web-standard fetch handler.
 *
 * @module
 */
export type { KeyCheck } from './api/auth.js'
export { openApiDocument, type ServerEntry } from './api/openapi.js'
export {
  type ErrorBody,
  ErrorSchema,
  type Int64,
  LimitSchema,
  ListQuerySchema,
  type NewPet,
  NewPetSchema,
  type Pet,
  PetIdSchema,
  PetSchema,
  type PetStatus,
  PetStatusSchema,
  PetsSchema,
} from './api/schemas.js'
export { createPetstore, type FetchHandler, type PetstoreOptions } from './create-petstore.js'
export type { CorsOptions } from './http/cors.js'
export type { OnResponse, ResponseInfo } from './http/observe.js'
export { type ErrorDetail, PetstoreError } from './shared/petstore-error.js'
export { type MemoryStoreOptions, memoryStore } from './store/memory.js'
export type { ListQuery, PetStore, ResettablePetStore } from './store/store.js'
