/**
 * What a database's errors mean to the API: which say that it cannot be
 * reached (a 503), and which are two processes migrating it at once.
 *
 * @module
 */
import { PetstoreError } from '../../api/errors.js'

// Errors that mean "the database is not there right now", not "this request is wrong".
const UNAVAILABLE = new Set([
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
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  '57P01', // postgres: admin shutdown
  '57P02', // postgres: crash shutdown
  '57P03', // postgres: cannot connect now
  '57014', // postgres: statement timeout (or canceled)
  '53300', // postgres: too many connections
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_STATEMENT_TIMEOUT',
  'ER_QUERY_TIMEOUT',
])

// pg reports a lost or timed-out connection with a bare Error, no code: only its message tells.
const PG_CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/

/** Whether `error` says the database cannot be reached (→ 503), judged by its code (or pg's message). */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false
  const code = errorCode(error)
  const { message, fatal, errors, cause } = error as {
    message?: unknown
    fatal?: unknown
    errors?: unknown
    cause?: unknown
  }
  if (code !== undefined) {
    if (UNAVAILABLE.has(code) || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_BUSY')) return true
    if (/^08[0-9A-Z]{3}$/.test(code)) return true // postgres: class 08, connection exception
  }
  if (typeof message === 'string' && PG_CONNECTION_LOST.test(message)) return true
  // mysql2 marks errors that broke the connection as fatal ("Can't add new command when connection is in closed state").
  if (fatal === true && !code?.startsWith('ER_')) return true
  // A host name with several addresses fails with an AggregateError of one error per address.
  if (Array.isArray(errors) && errors.some((each) => isUnavailable(each, depth + 1))) return true
  return isUnavailable(cause, depth + 1)
}

// Processes migrating one database at the same moment collide on these; the loser tries again.
const RACE = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  '23505', // postgres: unique violation (a concurrent `create … if not exists` on the catalog)
  '42P06', // postgres: duplicate schema
  '42P07', // postgres: duplicate table
  '40P01', // postgres: deadlock
  'ER_DUP_ENTRY',
  'ER_TABLE_EXISTS_ERROR',
  'ER_LOCK_DEADLOCK',
])

export function isMigrationRace(error: unknown): boolean {
  const code = errorCode(error)
  // SQLite has no migration lock: two processes may both record migration 0001 (it is idempotent).
  return (
    code !== undefined && (RACE.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_CONSTRAINT'))
  )
}

// node:sqlite reports every failure as ERR_SQLITE_ERROR with SQLite's numeric (extended) result code.
const SQLITE_EXTENDED: Record<number, string> = {
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}
const SQLITE_PRIMARY: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
}

/** The error's code as a string, with node:sqlite's numeric codes named as the other drivers name them. */
function errorCode(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown }
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    return SQLITE_EXTENDED[errcode] ?? SQLITE_PRIMARY[errcode & 0xff] ?? code
  }
  return typeof code === 'string' ? code : undefined
}

/** `error`, as a 503 when it says the database cannot be reached. */
export const mapped = (error: unknown): unknown => (isUnavailable(error) ? PetstoreError.unavailable(error) : error)

/** Rejects with `error`, as a 503 when it says the database cannot be reached. */
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
