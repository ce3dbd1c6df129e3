/**
 * Internal to the SQL stores: query spans for what kysely compiles, the
 * migrations and the Migrator's own queries. (The dialect's statements,
 * which a `kyselyStore` runs through kysely already compiled, make their
 * spans themselves, as on a store's own driver: see through-kysely.ts.)
 *
 * A kysely plugin rather than a wrapped driver: `kyselyStore` is handed a
 * `Kysely` whose driver is already built, and `withPlugin` is the public way
 * to see every query of it; the plugin sees the query tree, so the operation
 * and table are read from it instead of from SQL text. Its limit: kysely
 * tells a plugin of a result but not of a failure, so a query that fails
 * leaves no span (the request's server span still carries `error.type`).
 * The spans are started when the query is compiled, which is just before it
 * is sent.
 *
 * @module
 */
import type { KyselyPlugin, QueryId, RootOperationNode } from 'kysely'
import { endQuerySpan, type QuerySpan, startQuerySpan, tracing } from '../../shared/tracing.js'
import type { DbSystem } from './query-spans.js'

/** `SELECT`, `INSERT`, …, `CREATE TABLE`; for raw SQL its first keyword. */
function operationOf(node: RootOperationNode): string {
  switch (node.kind) {
    case 'SelectQueryNode':
      return 'SELECT'
    case 'InsertQueryNode':
      return 'INSERT'
    case 'UpdateQueryNode':
      return 'UPDATE'
    case 'DeleteQueryNode':
      return 'DELETE'
    case 'RawNode':
      return /^\s*([a-z]+)/i.exec(node.sqlFragments[0] ?? '')?.[1]?.toUpperCase() ?? 'QUERY'
    default:
      // CreateTableNode → CREATE TABLE
      return node.kind
        .replace(/Node$/, '')
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toUpperCase()
  }
}

type TableLike = { kind: string; table?: { identifier?: { name?: unknown } } } | undefined

/** The table a select, insert, update or delete works on, as the tree names it. */
function tableOf(node: RootOperationNode): string | undefined {
  let table: TableLike
  if (node.kind === 'SelectQueryNode' || node.kind === 'DeleteQueryNode') table = node.from?.froms[0] as TableLike
  else if (node.kind === 'InsertQueryNode') table = node.into as TableLike
  else if (node.kind === 'UpdateQueryNode') table = node.table as TableLike
  const name = table?.kind === 'TableNode' ? table.table?.identifier?.name : undefined
  return typeof name === 'string' ? name : undefined
}

/**
 * A plugin starting a span per query (when tracing is on and a request's span
 * records) and ending it with the result. `system` is asked per query: a
 * MySQL-family store learns whether it speaks to MariaDB once connected.
 */
export function querySpanPlugin(system: () => DbSystem): KyselyPlugin {
  const open = new WeakMap<QueryId, QuerySpan>()
  return {
    transformQuery({ node, queryId }) {
      if (!tracing()) return node
      const operation = operationOf(node)
      const table = tableOf(node)
      const attributes: Record<string, string> = { 'db.system': system(), 'db.operation.name': operation }
      if (table !== undefined) attributes['db.collection.name'] = table
      const span = startQuerySpan(table === undefined ? operation : `${operation} ${table}`, attributes)
      if (span !== undefined) open.set(queryId, span)
      return node
    },
    async transformResult({ result, queryId }) {
      const span = open.get(queryId)
      if (span !== undefined) {
        open.delete(queryId)
        endQuerySpan(span)
      }
      return result
    },
  }
}
