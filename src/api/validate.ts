/**
 * Runs valibot schemas and turns their issues into one 400
 * `validation_error` whose message names every offending field: a
 * {@link ErrorAnswer} returned, not thrown (see it for why).
 *
 * @module
 */
import * as v from 'valibot'
import { ErrorAnswer } from '../http/errors.js'
import type { ErrorDetail } from '../shared/petstore-error.js'

function detail(issue: v.BaseIssue<unknown>, where: string): ErrorDetail {
  const path = v.getDotPath(issue) ?? where
  // A missing key is reported by its object; say what is wrong with the key itself.
  const message = issue.kind === 'schema' && issue.received === 'undefined' ? 'is required' : issue.message
  return { path, message }
}

function invalid(details: ErrorDetail[]): ErrorAnswer {
  const message = details.map((d) => `${d.path}: ${d.message}`).join('; ')
  return new ErrorAnswer(400, 'validation_error', message, details)
}

// One message per value: after the first failed check, the later ones would only repeat it.
const CONFIG = { abortPipeEarly: true } as const

/**
 * `input` parsed by `schema`, or the 400 `validation_error` refusing it.
 * `where` names the value when the issue is about the whole input.
 */
export function validate<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  where: string,
): v.InferOutput<S> | ErrorAnswer {
  const result = v.safeParse(schema, input, CONFIG)
  if (result.success) return result.output
  return invalid(result.issues.map((issue) => detail(issue, where)))
}

/**
 * The fields of one object checked one by one, each by its entry of the
 * object's schema, and every failure told in one 400, as {@link validate}
 * of the whole object tells them: see inputs.ts for why.
 *
 * @example
 * ```ts
 * const fields = new FieldChecks()
 * const limit = fields.check(ListQuerySchema.entries.limit, '500', 'limit')
 * fields.refusal() // → the 400 ErrorAnswer: "limit: must be between 1 and 100"
 * ```
 */
export class FieldChecks {
  private details: ErrorDetail[] | undefined = undefined

  /** `input` parsed by `schema`; where it fails, its issues are kept under `key` and the result is `undefined`. */
  check<S extends v.GenericSchema>(schema: S, input: unknown, key: string): v.InferOutput<S> {
    const result = v.safeParse(schema, input, CONFIG)
    if (result.success) return result.output
    return this.failed(result.issues, key)
  }

  /** As {@link check}, through the inputs `remembered` has seen its schema take. */
  checkRemembered<S extends v.GenericSchema>(
    remembered: RememberedChecks<S>,
    input: unknown,
    key: string,
  ): v.InferOutput<S> {
    const { outputs } = remembered
    const output = outputs.get(input)
    if (output !== undefined || outputs.has(input)) return output as v.InferOutput<S>
    const result = v.safeParse(remembered.schema, input, CONFIG)
    if (!result.success) return this.failed(result.issues, key)
    if (outputs.size >= remembered.kept) outputs.clear()
    outputs.set(input, result.output)
    return result.output
  }

  /** Keeps `issues` under `key`; the field's result is then `undefined`. */
  private failed(issues: readonly v.BaseIssue<unknown>[], key: string): undefined {
    this.details ??= []
    for (const issue of issues) this.details.push(detail(issue, key))
    return undefined
  }

  /** The 400 `validation_error` of every failed check, if one failed. */
  refusal(): ErrorAnswer | undefined {
    return this.details === undefined ? undefined : invalid(this.details)
  }
}

/**
 * The inputs one schema took, and its output for each, for a field whose
 * valid inputs are few and come again request after request (a page's
 * `limit` and `status`): found here, such an input is not walked through the
 * schema's pipe again, most of what checking a query cost. Outputs must be
 * values nobody changes (strings, numbers). Inputs the
 * schema refused are not kept, so each refusal says why; at most `kept`
 * inputs are, so a client inventing them (`020`, `0020`…) cannot grow it.
 */
export class RememberedChecks<S extends v.GenericSchema> {
  readonly outputs = new Map<unknown, v.InferOutput<S>>()

  constructor(
    readonly schema: S,
    readonly kept = 256,
  ) {}
}
