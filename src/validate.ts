/**
 * Runs valibot schemas and turns their issues into one 400
 * `validation_error` whose message names every offending field.
 *
 * @module
 */
import * as v from 'valibot'
import { type ErrorDetail, PetstoreError } from './errors.js'

function detail(issue: v.BaseIssue<unknown>, where: string): ErrorDetail {
  const path = v.getDotPath(issue) ?? where
  // A missing key is reported by its object; say what is wrong with the key itself.
  const message = issue.kind === 'schema' && issue.received === 'undefined' ? 'is required' : issue.message
  return { path, message }
}

function invalid(details: ErrorDetail[]): PetstoreError {
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
  return new PetstoreError(400, 'validation_error', message, { details })
}

// One message per value: after the first failed check, the later ones would only repeat it.
const CONFIG = { abortPipeEarly: true } as const

/**
 * Parses `input` with `schema`, or throws 400 `validation_error`.
 * `where` names the value when the issue is about the whole input.
 */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input, CONFIG)
  if (result.success) return result.output
  throw invalid(result.issues.map((issue) => detail(issue, where)))
}

/**
 * The fields of one object checked one by one, each by its entry of the
 * object's schema, and every failure told in one 400, as {@link validate}
 * of the whole object tells them: see src/inputs.ts for why.
 *
 * @example
 * ```ts
 * const fields = new FieldChecks()
 * const limit = fields.check(ListQuerySchema.entries.limit, '500', 'limit')
 * fields.done() // throws 400: "limit: must be between 1 and 100"
 * ```
 */
export class FieldChecks {
  private details: ErrorDetail[] | undefined = undefined

  /** `input` parsed by `schema`; where it fails, its issues are kept under `key` and the result is `undefined`. */
  check<S extends v.GenericSchema>(schema: S, input: unknown, key: string): v.InferOutput<S> {
    const result = v.safeParse(schema, input, CONFIG)
    if (result.success) return result.output
    this.details ??= []
    for (const issue of result.issues) this.details.push(detail(issue, key))
    return undefined as v.InferOutput<S>
  }

  /** Throws the 400 `validation_error` of every failed check, if one failed. */
  done(): void {
    if (this.details !== undefined) throw invalid(this.details)
  }
}
