/**
 * Runs a valibot schema and turns its issues into one 400 `validation_error`
 * whose message names every offending field.
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

// One message per value: after the first failed check, the later ones would only repeat it.
const CONFIG = { abortPipeEarly: true } as const

/**
 * Parses `input` with `schema`, or throws 400 `validation_error`.
 * `where` names the value when the issue is about the whole input.
 */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, where: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input, CONFIG)
  if (result.success) return result.output
  const details = result.issues.map((issue) => detail(issue, where))
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
  throw new PetstoreError(400, 'validation_error', message, { details })
}
