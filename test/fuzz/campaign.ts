/**
 * One fuzz campaign on one store: the hostile-request property, then the
 * valid-create property, with one seed. Shared by `npm test` (few runs, a
 * fixed seed) and `npm run fuzz` (many runs, a random seed).
 */
import fc from 'fast-check'
import { openTarget, properties, type StoreKind } from './property.js'

export interface CampaignOptions {
  kind: StoreKind
  /** Hostile requests; a fifth as many valid creates run after them. */
  runs: number
  seed: number
  /** Where a SQLite store puts its file. */
  dir: string
}

export interface CampaignResult {
  kind: StoreKind
  seed: number
  requests: number
  creates: number
  ms: number
  /** Answers by status, hostile requests only. */
  statuses: Map<number, number>
  /** fast-check's report of the first failure (seed, path, shrunk counterexample), if any. */
  failure?: string
}

/** fast-check's report, and the assertion that failed (which it leaves out when shrinking ended early). */
function report<T>(details: fc.RunDetails<T>): string {
  const error = details.errorInstance
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error)
  return `${fc.defaultReportMessage(details) ?? 'failed'}\n\nError: ${reason}`
}

/** Runs both properties on a fresh store of `kind`; never throws for a failing property. */
export async function runCampaign({ kind, runs, seed, dir }: CampaignOptions): Promise<CampaignResult> {
  const target = await openTarget(kind, dir)
  const started = performance.now()
  const { requests, creates } = properties(target)
  const result: CampaignResult = { kind, seed, requests: 0, creates: 0, ms: 0, statuses: target.statuses }
  try {
    const first = await fc.check(requests, { seed, numRuns: runs })
    result.requests = first.numRuns
    if (first.failed) {
      result.failure = report(first)
      return result
    }
    const second = await fc.check(creates, { seed, numRuns: Math.max(1, Math.round(runs / 5)) })
    result.creates = second.numRuns
    if (second.failed) result.failure = report(second)
    return result
  } finally {
    result.ms = performance.now() - started
    await target.close()
  }
}

/** `200×812 201×95 …`: what the campaign was answered. */
export function formatStatuses(statuses: Map<number, number>): string {
  return [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ')
}
