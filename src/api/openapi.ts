/**
 * The OpenAPI 3.1 document, generated from the valibot schemas so that it can
 * never drift from what the handler validates.
 *
 * @module
 */
import { type ConversionConfig, toJsonSchema } from '@valibot/to-json-schema'
import type { GenericSchema } from 'valibot'
import { SUNSET } from '../http/headers.js'
import { MAX_KEY_LENGTH } from './idempotency.js'
import {
  ErrorSchema,
  jsonSchemaOfAction,
  jsonSchemaOfSchema,
  LimitSchema,
  NewPetSchema,
  PetIdSchema,
  PetSchema,
  PetStatusSchema,
  PetsSchema,
} from './schemas.js'

const components = {
  PetStatus: PetStatusSchema,
  NewPet: NewPetSchema,
  Pet: PetSchema,
  Pets: PetsSchema,
  Error: ErrorSchema,
}

const config: ConversionConfig = {
  target: 'draft-2020-12',
  // Query and path values arrive as strings; the document shows what they mean.
  typeMode: 'output',
  definitions: components,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  overrideSchema: ({ valibotSchema }) => jsonSchemaOfSchema.get(valibotSchema),
  overrideAction: ({ valibotAction, jsonSchema }) => {
    const extra = jsonSchemaOfAction.get(valibotAction)
    return extra && { ...jsonSchema, ...extra }
  },
}

/** JSON Schema of a valibot schema, without the per-document `$schema`/`$defs`. */
function schema(
  valibot: GenericSchema,
  definitions: Record<string, GenericSchema> = components,
): Record<string, unknown> {
  const { $schema, $defs, ...rest } = toJsonSchema(valibot, { ...config, definitions })
  return rest
}

const json = (ref: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } })
const error = (description: string) => ({ description, content: json('Error') })
const header = (description: string, options: { format?: string; required?: boolean } = {}) => ({
  description,
  required: options.required ?? true,
  schema: options.format ? { type: 'string', format: options.format } : { type: 'string' },
})

const commonErrors = {
  '401': {
    ...error('The bearer API key is missing or invalid.'),
    headers: {
      'WWW-Authenticate': header('`Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent.'),
    },
  },
  '500': error('Unexpected failure; the message reveals nothing internal.'),
  '503': error('The store cannot be reached; retry later.'),
  default: error('Any other error (404 for unknown routes, 405 with `Allow`).'),
}

/** A server the document lists: where the API answers, e.g. `{ url: 'https://api.example.org/v1', description: 'Production' }`. */
export interface ServerEntry {
  /** The API's address, base path included; absolute, or relative to the document. */
  url: string
  description?: string | undefined
}

/** The repository: the document's contact, and where its license is. */
const REPOSITORY = 'https://github.com/petstore-server/petstore-server'

/**
 * Builds the OpenAPI 3.1 document of the API mounted at `basePath`. Its
 * `servers` are `servers` when given, else the relative `basePath`, which
 * holds wherever the document is served from.
 *
 * @example
 * ```ts
 * const doc = openApiDocument('/v1', [{ url: 'https://api.example.org/v1', description: 'Production' }])
 * doc.paths['/pets'].get.operationId // 'listPets'
 * ```
 */
export function openApiDocument(basePath: string, servers?: readonly ServerEntry[]) {
  // Each component points at the others rather than inlining them, but never at
  // itself: with itself among the definitions it would become a bare `$ref` cycle.
  const componentSchemas = Object.fromEntries(
    Object.entries(components).map(([name, valibot]) => {
      const others = Object.fromEntries(Object.entries(components).filter(([other]) => other !== name))
      return [name, schema(valibot, others)]
    }),
  )
  return {
    openapi: '3.1.0',
    info: {
      title: 'Petstore',
      version: '1.0.0',
      description: 'List, add and retrieve the animals of a store. Every operation needs a bearer API key.',
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'petstore-server', url: `${REPOSITORY}/issues` },
    },
    servers: servers?.length ? servers.map((server) => ({ ...server })) : [{ url: basePath || '/' }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: 'pets', description: 'The animals of the store.' }],
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          tags: ['pets'],
          summary: 'List animals',
          description:
            'Ascending by id. When more pets match, `Link: <…>; rel="next"` gives the next page; following it visits every pet once.',
          parameters: [
            {
              name: 'limit',
              in: 'query',
              required: false,
              description: 'Maximum number of animals to return (1 to 100, 20 when omitted).',
              schema: schema(LimitSchema),
            },
            {
              name: 'status',
              in: 'query',
              required: false,
              description: 'Filters animals by availability status: only animals with this status are returned.',
              schema: { $ref: '#/components/schemas/PetStatus' },
            },
            {
              name: 'cursor',
              in: 'query',
              required: false,
              description:
                'Opaque and signed; take it from a `Link: rel="next"` header. It continues the query it was issued for: sent with another `status`, or not issued by this deployment, it is a 400 naming `cursor`. `limit` may change between pages.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'A page of pets.',
              headers: { Link: header('`<…>; rel="next"` when there are more pets.', { required: false }) },
              content: json('Pets'),
            },
            '400': error('A query parameter is invalid (`validation_error`).'),
            ...commonErrors,
          },
        },
        post: {
          operationId: 'createPet',
          tags: ['pets'],
          summary: 'Add an animal',
          description:
            'Stores a new animal and answers it with the id the service assigned, and its URL in `Location`.',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: `Makes a retried create safe: a retry with the same key and payload (the same JSON value) answers the first pet, marked \`Idempotent-Replayed: true\`, and creates nothing. 1 to ${MAX_KEY_LENGTH} visible ASCII characters, bare (\`abc-123\`) or as a Structured Field string (\`"abc-123"\`), which name the same key; a bare key holds no comma. Scoped to the API key; kept for a time the server sets (24 hours by default), then free again.`,
              schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH + 2 },
            },
          ],
          requestBody: { required: true, content: json('NewPet') },
          responses: {
            '201': {
              description:
                'The stored pet, with its new id; or, for a retry with its Idempotency-Key, the pet that key created.',
              headers: {
                Location: header('URL of the new pet.', { format: 'uri-reference' }),
                'Idempotent-Replayed': header(
                  '`true` when this answer is the replay of an earlier create with the same Idempotency-Key; absent on the create itself.',
                  { required: false },
                ),
              },
              content: json('Pet'),
            },
            '400': error(
              'The body is not JSON (`invalid_json`) or not a valid NewPet (`validation_error`), or the Idempotency-Key is not a key (`invalid_idempotency_key`: empty, too long, a control character, given twice).',
            ),
            '409': error(
              'A create with this Idempotency-Key is still running after the wait for it (`idempotency_key_in_use`); retry later.',
            ),
            '422': error(
              'This Idempotency-Key was used with another payload (`idempotency_key_reused`); nothing was created.',
            ),
            '413': error('The body is larger than the limit.'),
            '415': error('The body is not `application/json`.'),
            ...commonErrors,
          },
        },
      },
      '/pets/{petId}': {
        get: {
          operationId: 'getPet',
          tags: ['pets'],
          summary: 'Get an animal (deprecated)',
          description: `Deprecated; removed on ${SUNSET}. Use \`GET /pets\` with a \`status\` filter.`,
          deprecated: true,
          parameters: [
            {
              name: 'petId',
              in: 'path',
              required: true,
              description: 'The identifier of the animal.',
              schema: schema(PetIdSchema),
            },
          ],
          responses: {
            '200': {
              description: 'The pet.',
              headers: {
                Deprecation: header('RFC 9745 date of deprecation.'),
                Sunset: header('RFC 8594 date of removal.'),
                Link: header('`rel="successor-version"`: the list operation.'),
              },
              content: json('Pet'),
            },
            '400': error('`petId` is not an integer (`validation_error`).'),
            '404': error('No pet has this id (`not_found`).'),
            ...commonErrors,
          },
        },
      },
    },
    components: {
      schemas: componentSchemas,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token.' } },
    },
  }
}
