/**
 * The three operations of the API, over a validated request and a store.
 *
 * @module
 */
import { type JsonBodyShape, readJson } from '../http/body.js'
import { ErrorAnswer } from '../http/errors.js'
import { type ApiAnswer, type ApiRequest, jsonAnswer } from '../http/exchange.js'
import { singleValues, type Target } from '../http/request-target.js'
import type { AbortLike } from '../shared/deadline.js'
import type { KeyedOutcome } from '../store/keyed.js'
import type { JsonPage, Store } from '../store/store.js'
import { type Cursor, type CursorCodec, staleCursor } from './cursor.js'
import { fingerprintOf, idempotencyKeyOf, REPLAYED, scopeOf } from './idempotency.js'
import { listQueryOf, newPetOf, petIdOf } from './inputs.js'
import { INT64_KEYS, REQUIRED_KEYS } from './pet-fields.js'
import { petJson } from './pet-json.js'
import type { Pet } from './schemas.js'

/** What the operations need from `createPetstore`'s options. */
export interface OperationContext {
  store: Store
  basePath: string
  maxBodyBytes: number
  /** Issues and checks the cursors of `Link: rel="next"`. */
  cursors: CursorCodec
  /** How long an `Idempotency-Key` is kept, and how long a retry waits for its first create, in ms. */
  idempotency: { ttlMs: number; waitMs: number }
}

const KNOWN_QUERY = ['limit', 'status', 'cursor'] as const

/**
 * `GET /pets`: one page, and a `Link: rel="next"` when more pets match; at once where the store answers at once.
 * Like every operation here, it returns its refusals (an {@link ErrorAnswer}) rather than throwing them.
 */
export function listPets(
  target: Target,
  context: OperationContext,
  signal: AbortLike | undefined,
): ApiAnswer | Promise<ApiAnswer> {
  const values = singleValues(target.query, KNOWN_QUERY)
  if (typeof values === 'string') {
    return new ErrorAnswer(400, 'validation_error', `${values}: must be given at most once`, [
      { path: values, message: 'must be given at most once' },
    ])
  }
  const query = listQueryOf({ limit: values[0], status: values[1], cursor: values[2] })
  if (query instanceof ErrorAnswer) return query
  const { status, limit } = query
  // A cursor continues the walk over one `status` only: another status would skip pets silently.
  const cursor = query.cursor === undefined ? undefined : context.cursors.decode(query.cursor, status)
  if (cursor instanceof ErrorAnswer) return cursor
  // The store writes the page's JSON itself where it can (a SQL database does it faster than rows become objects).
  const page = context.store.page({ status, limit, after: cursor?.after }, signal)
  return page instanceof Promise
    ? page.then((found) => pageAnswer(found, cursor, limit, status, context))
    : pageAnswer(page, cursor, limit, status, context)
}

/**
 * The answer of a page read after `cursor`: refused when the store was reset since the cursor was
 * issued (the page came from another generation of pets), else the page and its next link.
 */
function pageAnswer(
  { json, lastId, more, generation = 0 }: JsonPage,
  cursor: Cursor | undefined,
  limit: number,
  status: string | undefined,
  { basePath, cursors }: OperationContext,
): ApiAnswer {
  if (cursor !== undefined && cursor.generation !== generation) return staleCursor()
  const headers: Record<string, string> = {}
  if (more && lastId !== undefined) {
    const cursor = cursors.encode(lastId, status, generation)
    headers.link = `<${basePath}/pets?limit=${limit}${status ? `&status=${status}` : ''}&cursor=${cursor}>; rel="next"`
  }
  return jsonAnswer(json, 200, headers)
}

/** The body of a create: its int64 keys read digit for digit, and what a missing body is told. */
const NEW_PET_BODY: JsonBodyShape = {
  exactIntegers: INT64_KEYS,
  expected: `a JSON object with ${REQUIRED_KEYS.join(' and ')}`,
}

/**
 * `POST /pets`: 201 with the stored pet and its `Location`. Checks that need no body refuse at once.
 * With an `Idempotency-Key`, a create of its own: the create without one is left as it was.
 */
export function createPet(request: ApiRequest, context: OperationContext): ApiAnswer | Promise<ApiAnswer> {
  const key = request.header('idempotency-key')
  if (key !== null) return createWithKey(key, request, context)
  return readJson(request, context.maxBodyBytes, NEW_PET_BODY, createFrom, context)
}

/** A create with an `Idempotency-Key`: a bad key is a 400 before the body is read. */
function createWithKey(header: string, request: ApiRequest, context: OperationContext) {
  const key = idempotencyKeyOf(header)
  if (key instanceof ErrorAnswer) return key
  return readJson(
    request,
    context.maxBodyBytes,
    NEW_PET_BODY,
    (body) => createKeyedFrom(key, body, request, context),
    context,
  )
}

/** The keyed create of a parsed body: the pet it makes or replays, or the key's conflict. */
async function createKeyedFrom(
  key: string,
  body: unknown,
  request: ApiRequest,
  { store, basePath, idempotency }: OperationContext,
): Promise<ApiAnswer> {
  const pet = newPetOf(body)
  if (pet instanceof ErrorAnswer) return pet
  const scope = scopeOf(request.header('authorization'))
  const now = Date.now()
  const fingerprint = fingerprintOf(body)
  const create = { pet, scope, key, fingerprint, now, expiresAt: now + idempotency.ttlMs, waitMs: idempotency.waitMs }
  return keyedAnswer(await store.createKeyed(create, request.signal), basePath)
}

function keyedAnswer(outcome: KeyedOutcome, basePath: string): ApiAnswer {
  if ('pet' in outcome) {
    const answer = created(outcome.pet, basePath)
    if (outcome.replayed) answer.headers[REPLAYED] = 'true'
    return answer
  }
  if (outcome.conflict === 'payload') {
    return new ErrorAnswer(
      422,
      'idempotency_key_reused',
      'This Idempotency-Key was used with another payload; send a new key for a new pet',
    )
  }
  return new ErrorAnswer(
    409,
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed; retry later',
  )
}

/** The create of a parsed body: its checks, then the store. */
function createFrom(
  body: unknown,
  request: ApiRequest,
  { store, basePath }: OperationContext,
): ApiAnswer | Promise<ApiAnswer> {
  const input = newPetOf(body)
  if (input instanceof ErrorAnswer) return input
  const pet = store.create(input, request.signal)
  return pet instanceof Promise ? pet.then((stored) => created(stored, basePath)) : created(pet, basePath)
}

function created(pet: Pet, basePath: string): ApiAnswer {
  return jsonAnswer(petJson(pet), 201, { location: `${basePath}/pets/${pet.id}` })
}

/** `GET /pets/{petId}`: the pet, or 404; at once where the store answers at once. */
export function getPet(
  rawId: string,
  { store }: OperationContext,
  signal: AbortLike | undefined,
): ApiAnswer | Promise<ApiAnswer> {
  let text = rawId
  if (rawId.includes('%')) {
    try {
      text = decodeURIComponent(rawId)
    } catch {
      // not percent-decodable: validation rejects it below
    }
  }
  const id = petIdOf(text)
  if (id instanceof ErrorAnswer) return id
  // An int64 beyond the safe range is well-formed, but no pet can have it.
  if (!Number.isSafeInteger(id)) return petAnswer(undefined, text)
  const pet = store.get(id, signal)
  return pet instanceof Promise ? pet.then((found) => petAnswer(found, text)) : petAnswer(pet, text)
}

function petAnswer(pet: Pet | undefined, text: string): ApiAnswer {
  // The id in its canonical form (`007` and `-0` name 7 and 0), exact beyond 2^53 too.
  if (!pet) return new ErrorAnswer(404, 'not_found', `No pet with id ${BigInt(text)}`)
  return jsonAnswer(petJson(pet))
}
