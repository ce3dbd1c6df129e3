/**
 * Internal to the SQL stores: a child span per query under the request's
 * server span, when `@opentelemetry/api` is loaded (see ../tracing.ts). The
 * span carries what the statement is, never what it was run with: the
 * semantic conventions' `db.system`, `db.operation.name`,
 * `db.collection.name` and the parameterized `db.query.text` (values travel
 * as parameters, never in the text), named `SELECT petstore_pets`.
 *
 * Each statement is described once, when it is prepared; running it costs one
 * boolean check (`tracing()`) when the API is not loaded.
 *
 * @module
 */
import { endQuerySpan, startQuerySpan } from '../../shared/tracing.js'

/** `db.system` as the semantic conventions spell it. */
export type DbSystem = 'sqlite' | 'postgresql' | 'mysql' | 'mariadb'

/** A statement as its span shows it. */
export interface QueryDescription {
  readonly name: string
  readonly attributes: Readonly<Record<string, string>>
}

/** The statement that follows a `with … as (…)` prefix: after a closing parenthesis. */
const AFTER_CTE = /\)\s*(select|insert|update|delete)\b/i
const FIRST_WORD = /^\s*([a-z]+)/i

/** `SELECT`, `INSERT`, `BEGIN`, …: the statement's own keyword, the main one after a `with` prefix. */
export function operationOf(text: string): string {
  const first = FIRST_WORD.exec(text)?.[1]?.toUpperCase() ?? 'QUERY'
  if (first !== 'WITH') return first
  return AFTER_CTE.exec(text)?.[1]?.toUpperCase() ?? first
}

/**
 * Describes `text` run on `system`, against `table` when the text names it
 * (a `begin`, a lock or `select version()` does not).
 */
export function describeQuery(
  system: DbSystem,
  text: string,
  table: string,
  operation = operationOf(text),
): QueryDescription {
  const attributes: Record<string, string> = {
    'db.system': system,
    'db.operation.name': operation,
    'db.query.text': text,
  }
  if (!text.includes(table)) return { name: operation, attributes }
  attributes['db.collection.name'] = table
  return { name: `${operation} ${table}`, attributes }
}

/**
 * Runs `work` (a query, answering at once or with a promise) inside a span
 * described by `query`; `work` runs as it would if no span can be made.
 * Call only when `tracing()` is true.
 */
export function inQuerySpan<T>(query: QueryDescription, work: () => T): T {
  const span = startQuerySpan(query.name, query.attributes)
  if (span === undefined) return work()
  let result: T
  try {
    result = work()
  } catch (error) {
    endQuerySpan(span, error ?? 'Error')
    throw error
  }
  if (!(result instanceof Promise)) {
    endQuerySpan(span)
    return result
  }
  return result.then(
    (value) => {
      endQuerySpan(span)
      return value
    },
    (error: unknown) => {
      endQuerySpan(span, error ?? 'Error')
      throw error
    },
  ) as T
}
