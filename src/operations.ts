/**
 * The three operations of the API, over a validated request and a store.
 *
 * @module
 */
import { readJson } from './body.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { PetstoreError } from './errors.js'
import { ListQuerySchema, NewPetSchema, PetIdSchema } from './schemas.js'
import type { PetStore } from './store.js'
import { validate } from './validate.js'

/** What the operations need from `createPetstore`'s options. */
export interface OperationContext {
  store: PetStore
  basePath: string
  maxBodyBytes: number
}

const KNOWN_QUERY = ['limit', 'status', 'cursor'] as const

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** `GET /pets`: one page, and a `Link: rel="next"` when more pets match. */
export async function listPets(url: URL, { store, basePath }: OperationContext): Promise<Response> {
  const raw: Record<string, string | undefined> = {}
  for (const name of KNOWN_QUERY) {
    const values = url.searchParams.getAll(name)
    if (values.length > 1) {
      throw new PetstoreError(400, 'validation_error', `${name}: must be given at most once`, {
        details: [{ path: name, message: 'must be given at most once' }],
      })
    }
    raw[name] = values[0]
  }
  const query = validate(ListQuerySchema, raw, 'query')
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  // One row more than asked tells whether a next page exists without a count.
  const rows = await store.list({ status: query.status, limit: query.limit + 1, after })
  const pets = rows.slice(0, query.limit)
  const headers: Record<string, string> = {}
  const last = pets[pets.length - 1]
  if (rows.length > query.limit && last) {
    const next = new URLSearchParams({ limit: String(query.limit) })
    if (query.status) next.set('status', query.status)
    next.set('cursor', encodeCursor(last.id))
    headers.link = `<${basePath}/pets?${next}>; rel="next"`
  }
  return json(pets, 200, headers)
}

/** `POST /pets`: 201 with the stored pet and its `Location`. */
export async function createPet(request: Request, { store, basePath, maxBodyBytes }: OperationContext) {
  const body = await readJson(request, maxBodyBytes)
  // valibot's object schema takes arrays for objects; the API does not.
  const input = validate(NewPetSchema, Array.isArray(body) ? null : body, 'body')
  const pet = await store.create(input)
  return json(pet, 201, { location: `${basePath}/pets/${pet.id}` })
}

/** `GET /pets/{petId}`: the pet, or 404. */
export async function getPet(rawId: string, { store }: OperationContext): Promise<Response> {
  let text: string
  try {
    text = decodeURIComponent(rawId)
  } catch {
    text = rawId // not percent-decodable: validation rejects it below
  }
  const id = validate(PetIdSchema, text, 'petId')
  // An int64 beyond the safe range is well-formed, but no pet can have it.
  const pet = Number.isSafeInteger(id) ? await store.get(id) : undefined
  if (!pet) throw new PetstoreError(404, 'not_found', `No pet with id ${text}`)
  return json(pet)
}
