/**
 * petstore-server: the Petstore v1 API as a web-standard fetch handler.
 *
 * @module
 */
export type { KeyCheck } from './auth.js'
export type { CorsOptions } from './cors.js'
export { createPetstore, type FetchHandler, type PetstoreOptions } from './create-petstore.js'
export { type ErrorDetail, PetstoreError } from './errors.js'
export type { OnResponse, ResponseInfo } from './observe.js'
export { openApiDocument, type ServerEntry } from './openapi.js'
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
} from './schemas.js'
export type { ListQuery, PetStore } from './store.js'
export { type MemoryStoreOptions, memoryStore } from './stores/memory.js'
