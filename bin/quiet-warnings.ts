/**
 * One warning kept off stderr: node:sqlite's ExperimentalWarning, which Node 22 prints on
 * every start that opens a SQLite file, and which a user of the binary cannot act on.
 *
 * @module
 */

/** The message Node gives: `SQLite is an experimental feature and might change at any time`. */
const SQLITE_EXPERIMENTAL = /^SQLite is an experimental feature/

/**
 * Passes every warning but node:sqlite's experimental one to the listeners Node installed (its
 * printer, unless `--no-warnings`). Call it before node:sqlite loads: the warning is said once.
 *
 * @example
 * ```ts
 * quietSqliteWarning()
 * await import('node:sqlite') // no ExperimentalWarning on stderr
 * ```
 */
export function quietSqliteWarning(): void {
  const listeners = process.listeners('warning')
  process.removeAllListeners('warning')
  process.on('warning', (warning) => {
    if (warning.name === 'ExperimentalWarning' && SQLITE_EXPERIMENTAL.test(warning.message)) return
    for (const listener of listeners) listener.call(process, warning)
  })
}
