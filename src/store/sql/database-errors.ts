/**
 * What a database's errors mean to the API: which say that it cannot be
 * reached (a 503), and which are two processes migrating it at once. The
 * codes are each dialect's (see dialects/); the network's are here.
 *
 * @module
 */
import { PetstoreError } from '../../shared/petstore-error.js'
import { MYSQL_ERRORS } from './dialects/mysql.js'
import { POSTGRES_ERRORS } from './dialects/postgres.js'
import { SQLITE_ERRORS } from './dialects/sqlite.js'
import { type DialectErrors, triedAgain } from './hot-path.js'

const DIALECTS: readonly DialectErrors[] = [SQLITE_ERRORS, POSTGRES_ERRORS, MYSQL_ERRORS]

// The network's errors, whichever database is behind it.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
])

/** Whether `error` says the database cannot be reached (→ 503), judged by its code (or what its driver adds). */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false
  const code = errorCode(error)
  if (code !== undefined && (UNREACHABLE.has(code) || DIALECTS.some((dialect) => dialect.unavailable(code)))) {
    return true
  }
  if (DIALECTS.some((dialect) => dialect.lost?.(error, code))) return true
  const { errors, cause } = error as { errors?: unknown; cause?: unknown }
  // A host name with several addresses fails with an AggregateError of one error per address.
  if (Array.isArray(errors) && errors.some((each) => isUnavailable(each, depth + 1))) return true
  return isUnavailable(cause, depth + 1)
}

/** Whether `error` is a lock conflict the database rolled back (see `DialectErrors.busy`): safe to try again. */
export function isBusy(error: unknown): boolean {
  const code = errorCode(error)
  return code !== undefined && DIALECTS.some((dialect) => dialect.busy?.(code) === true)
}

/** `work`, tried again while it fails {@link isBusy}: see `triedAgain`. */
export const retryingBusy = <T>(work: () => Promise<T>): Promise<T> => triedAgain(work, isBusy)

export function isMigrationRace(error: unknown): boolean {
  const code = errorCode(error)
  return code !== undefined && DIALECTS.some((dialect) => dialect.race(code))
}

/** The codes of a row refused for a key already in its table (SQLite's by name, as {@link errorCode} names them). */
const DUPLICATE = new Set(['23505', 'ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/**
 * Whether `error` refused a row whose key is in the table already: an idempotency key another
 * request stored first. D1 tells it by SQLite's message alone, which every SQLite driver keeps.
 */
export function isDuplicateKey(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false
  const code = errorCode(error)
  if (code !== undefined && DUPLICATE.has(code)) return true
  const { message, cause } = error as { message?: unknown; cause?: unknown }
  if (typeof message === 'string' && message.includes('UNIQUE constraint failed')) return true
  return isDuplicateKey(cause, depth + 1)
}

/** The error's code as a string, as the drivers that report it otherwise name it. */
function errorCode(error: unknown): string | undefined {
  const given = (error ?? {}) as { code?: unknown; errcode?: unknown }
  for (const dialect of DIALECTS) {
    const code = dialect.code?.(given)
    if (code !== undefined) return code
  }
  return typeof given.code === 'string' ? given.code : undefined
}

/**
 * `error`, as a 503 when it says the database cannot be reached, or that it lost a lock conflict
 * (then with `Retry-After: 1`: the conflict is over in a moment).
 */
export function mapped(error: unknown): unknown {
  if (isUnavailable(error)) return PetstoreError.unavailable(error)
  return isBusy(error) ? PetstoreError.unavailable(error, 1) : error
}

/** Rejects with `error`, as {@link mapped} answers it. */
export function unavailable(error: unknown): Promise<never> {
  return Promise.reject(mapped(error))
}

/** `read`, its failures mapped as the asynchronous calls map them (see `unavailable`). */
export const mappingErrors =
  <A, R>(read: (argument: A) => unknown) =>
  (argument: A): R => {
    try {
      return read(argument) as R
    } catch (error) {
      throw mapped(error)
    }
  }
