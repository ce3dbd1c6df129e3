/**
 * The PostgreSQL dialect: its schema, its statements, its id-order insert and
 * what its errors mean. `postgresStore` runs the statements as named
 * (prepared) statements straight on `pg`; a `kyselyStore` over a PostgreSQL
 * instance runs the same text through kysely.
 *
 * Not through kysely on the hot path: building and compiling its query per
 * request cost more than the query; a named statement is also parsed and
 * planned once per connection by the server instead of at every request.
 *
 * @module
 */
import type { NewPet } from '../../../api/schemas.js'
import { tracing } from '../../../shared/tracing.js'
import type { JsonPage, ListQuery } from '../../store.js'
import {
  type DialectErrors,
  EMPTY_PAGE,
  type HotPath,
  type HotPathTarget,
  insertLockName,
  type JsonPageRow,
  type PetRow,
  pageOfJson,
  qualifiedTable,
  storedPet,
  toPet,
} from '../hot-path.js'
import type { KeyedRow, KeyStatements } from '../keyed-sql.js'
import {
  INSERTED_COLUMNS,
  insertedValues,
  PET_COLUMNS,
  postgresPetJson,
  postgresTypes,
  selectedColumns,
} from '../pet-columns.js'
import { describeQuery, inQuerySpan } from '../query-spans.js'
import { generationTable, keysTable } from '../schema-history.js'

/** The schema the tables go to when none is given: kysely's Migrator looks in every schema unless told one. */
export const CURRENT_SCHEMA = 'select current_schema() as schema'

/** Runs one named statement: `pg.Pool#query` (prepared once per connection), or any runner of the same shape. */
export type PostgresRunner = (statement: { name: string; text: string; values: unknown[] }) => Promise<{
  rows: unknown[]
}>

/**
 * Statement names, one per distinct text in this program; a name given to two
 * texts on one connection is an error in pg, and connections belong to one
 * process: so names count up here, and stores on one table share them.
 */
const names = new Map<string, string>()
function nameOf(text: string): string {
  let name = names.get(text)
  if (name === undefined) {
    name = `petstore_hot_${names.size + 1}`
    names.set(text, name)
  }
  return name
}

/** A pet as JSON text in the API's form (no key for a NULL optional column); `to_json` escapes the strings. */
const PET_JSON = postgresPetJson()

/** `$1::text, $2::bigint, …`: the pet's columns as parameters, from `$1`. */
const PARAMETERS = postgresTypes.map((type, index) => `$${index + 1}::${type}`).join(', ')
/** The same as arrays, for `unnest`. */
const ARRAYS = postgresTypes.map((type, index) => `$${index + 1}::${type}[]`).join(', ')
/** The parameter after the pet's columns: the insert lock's name. */
const LOCK = `$${postgresTypes.length + 1}::text`

/**
 * The statements of the hot path on `target`, run by `query`. Pages as JSON
 * are written by PostgreSQL: the client then parses one text value instead of
 * a row per pet, builds no objects and stringifies nothing (under concurrent
 * load a third of the client's CPU time per page of 20, a fourth at 100).
 * `json_agg` would put spaces and newlines in, so the text is concatenated,
 * the strings escaped by `to_json`. A page aggregates `limit + 1` pets and
 * `pageOfJson` cuts the extra one off, as for SQLite.
 *
 * `create` takes the insert lock (see `insertLockName`) in the statement
 * itself: the lock is taken before the id is drawn and held until the
 * statement's own transaction commits, in one round trip, on any connection.
 */
export function postgresHotPath(query: PostgresRunner, target: HotPathTarget): HotPath {
  const from = qualifiedTable(target)
  // int64 columns as decimal text: pg reads int8 as a string anyway, and a pool set up to give numbers would round it.
  const columns = selectedColumns('postgres')
  const lockName = insertLockName(target)
  const generations = qualifiedTable(generationTable(target))
  const statement = (text: string) => {
    const name = nameOf(text)
    // Traced, each run is a query span (see query-spans.ts); a group-commit batch is one statement, so one span.
    const described = describeQuery('postgresql', text, target.table)
    return async (values: unknown[]) =>
      (await (tracing() ? inQuerySpan(described, () => query({ name, text, values })) : query({ name, text, values })))
        .rows
  }
  // $1 is the status where a statement filters by one.
  const where = (byStatus: boolean, after: string) =>
    byStatus ? `status = $1::text and id > ${after}::bigint` : `id > ${after}::bigint`
  const page = (byStatus: boolean) => {
    const [after, limit] = byStatus ? ['$2', '$3'] : ['$1', '$2']
    return statement(`select ${columns} from ${from} where ${where(byStatus, after)} order by id limit ${limit}::int`)
  }
  const jsonPage = (byStatus: boolean) => {
    const [after, limit] = byStatus ? ['$2', '$3'] : ['$1', '$2']
    // The generation in the page's own statement (see generationTable): no round trip more.
    return statement(`select '[' || coalesce(string_agg(pet, ',' order by id), '') || ']' as json,
        count(*) as count, max(id) as last_id, (select generation from ${generations}) as generation
      from (select id, ${PET_JSON} as pet
        from ${from} where ${where(byStatus, after)} order by id limit ${limit}::int) as page`)
  }
  const byId = statement(`select ${columns} from ${from} where id = $1::bigint`)
  const ping = statement(`select id from ${from} limit 1`)
  const insert = statement(`with locked as (select pg_advisory_xact_lock(hashtext(${LOCK})))
    insert into ${from} (${INSERTED_COLUMNS}) select ${PARAMETERS} from locked returning id`)
  // Group commit (see group-commit.ts): many rows in one statement, under the same lock, one commit.
  // The rows are fed to the insert in their order (`with ordinality`, `order by`), so ids are drawn
  // from the sequence in that order: sorted, the returned ids are the rows' ids in order, whatever
  // order `returning` lists them in (which PostgreSQL does not promise). An int64 goes to the
  // driver as given; pg writes a number or bigint into the bigint[] text alike.
  const inputs = PET_COLUMNS.map((column) => `input.${column}`).join(', ')
  const insertRows = statement(`with locked as (select pg_advisory_xact_lock(hashtext(${LOCK})))
    insert into ${from} (${INSERTED_COLUMNS})
    select ${inputs}
      from locked, unnest(${ARRAYS}) with ordinality as input(${INSERTED_COLUMNS}, n)
      order by input.n
    returning id`)
  const pages = [page(false), page(true)] as const
  const jsonPages = [jsonPage(false), jsonPage(true)] as const
  // Ids are positive: no cursor is the cursor 0.
  const filter = ({ status, after = 0 }: ListQuery) => (status === undefined ? [after] : [status, after])

  async function insertOne(pet: NewPet): Promise<number> {
    const [row] = (await insert([...insertedValues(pet), lockName])) as Array<Pick<PetRow, 'id'>>
    if (row === undefined) throw new Error('postgresStore: the insert returned no id')
    return Number(row.id)
  }

  return {
    keys: postgresKeys(statement, target, { inputs, lockName }),
    async get(id) {
      const [row] = (await byId([id])) as PetRow[]
      return row && toPet(row)
    },
    async list(query) {
      const rows = (await pages[query.status === undefined ? 0 : 1]([...filter(query), query.limit])) as PetRow[]
      return rows.map(toPet)
    },
    async page(query): Promise<JsonPage> {
      const { limit } = query
      if (!(limit >= 1)) return EMPTY_PAGE
      const rows = await jsonPages[query.status === undefined ? 0 : 1]([...filter(query), limit + 1])
      return pageOfJson(rows[0] as JsonPageRow | undefined, limit)
    },
    async create(pet) {
      return storedPet(await insertOne(pet), pet)
    },
    async ping() {
      await ping([])
    },
    async insertMany(pets) {
      // A lone row keeps the one-row statement: no arrays to build or unnest.
      if (pets.length === 1) return [await insertOne(pets[0]!)]
      const values = pets.map(insertedValues)
      const columns = PET_COLUMNS.map((_, column) => values.map((row) => row[column]))
      const rows = (await insertRows([...columns, lockName])) as Array<Pick<PetRow, 'id'>>
      if (rows.length !== pets.length) throw new Error('postgresStore: the insert returned fewer ids than rows')
      return rows.map((row) => Number(row.id)).sort((a, b) => a - b)
    },
  }
}

/** A row of the keys table as PostgreSQL gives it: int8 as text. */
interface KeyRowOfPostgres {
  fingerprint: string
  pet_id: string | number
  expires_at: string | number
}

/**
 * The statements on the keys table beside `target`'s pets. A keyed insert is one statement, so
 * one transaction: the pets inserted as a batch of creates is (under the insert lock, in their
 * order), numbered by their ids, and each key inserted beside the pet of its number.
 */
function postgresKeys(
  statement: (text: string) => (values: unknown[]) => Promise<unknown[]>,
  target: HotPathTarget,
  { inputs, lockName }: { inputs: string; lockName: string },
): KeyStatements {
  const from = qualifiedTable(target)
  const keys = qualifiedTable(keysTable(target))
  const find = statement(
    `select fingerprint, pet_id, expires_at from ${keys} where scope = $1::text and key = $2::text`,
  )
  const drop = statement(`delete from ${keys} where scope = $1::text and key = $2::text and expires_at <= $3::bigint`)
  const sweep = statement(`delete from ${keys} where expires_at <= $1::bigint`)
  const after = postgresTypes.length + 1
  const keyArrays = ['text', 'text', 'text', 'bigint'].map((type, index) => `$${after + 1 + index}::${type}[]`)
  const insert = statement(`with locked as (select pg_advisory_xact_lock(hashtext($${after}::text))),
    pets as (
      insert into ${from} (${INSERTED_COLUMNS})
      select ${inputs}
        from locked, unnest(${ARRAYS}) with ordinality as input(${INSERTED_COLUMNS}, n)
        order by input.n
      returning id),
    numbered as (select id, row_number() over (order by id) as n from pets)
    insert into ${keys} (scope, key, fingerprint, pet_id, expires_at)
    select given.scope, given.key, given.fingerprint, numbered.id, given.expires_at
      from numbered join unnest(${keyArrays.join(', ')}) with ordinality
        as given(scope, key, fingerprint, expires_at, n) on given.n = numbered.n
    returning pet_id`)

  async function insertMany(rows: readonly KeyedRow[]): Promise<number[]> {
    const values = rows.map((row) => insertedValues(row.pet))
    const columns = PET_COLUMNS.map((_, column) => values.map((each) => each[column]))
    const given = [
      rows.map((row) => row.scope),
      rows.map((row) => row.key),
      rows.map((row) => row.fingerprint),
      rows.map((row) => row.expiresAt),
    ]
    const inserted = (await insert([...columns, lockName, ...given])) as Array<{ pet_id: string | number }>
    if (inserted.length !== rows.length) throw new Error('postgresStore: the insert returned fewer ids than rows')
    return inserted.map((row) => Number(row.pet_id)).sort((a, b) => a - b)
  }

  return {
    async find(scope, key) {
      const [row] = (await find([scope, key])) as KeyRowOfPostgres[]
      return row && { fingerprint: row.fingerprint, petId: Number(row.pet_id), expiresAt: Number(row.expires_at) }
    },
    async drop(scope, key, before) {
      await drop([scope, key, before])
    },
    async sweep(now) {
      await sweep([now])
    },
    insert: async (row) => (await insertMany([row]))[0] as number,
    insertMany,
  }
}

const UNAVAILABLE = new Set([
  '57P01', // admin shutdown
  '57P02', // crash shutdown
  '57P03', // cannot connect now
  '57014', // statement timeout (or canceled)
  '53300', // too many connections
  '3D000', // the database does not exist: dropped, or not made yet
])

const RACE = new Set([
  '23505', // unique violation (a concurrent `create … if not exists` on the catalog)
  '42P06', // duplicate schema
  // kysely's introspection lists every table of the database: a schema or a table another session
  // drops meanwhile fails it (a schema of tests, dropped beside a store's first migration).
  '3F000', // the schema does not exist
  '42P01', // the table does not exist
  '42P07', // duplicate table
  '40P01', // deadlock
])

// pg reports a lost or timed-out connection with a bare Error, no code: only its message tells.
const CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/

/** What PostgreSQL's errors say, by their SQLSTATE (and pg's, by its message). */
export const POSTGRES_ERRORS: DialectErrors = {
  // Class 08 is a connection exception.
  unavailable: (code) => UNAVAILABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code),
  lost: ({ message }) => typeof message === 'string' && CONNECTION_LOST.test(message),
  race: (code) => RACE.has(code),
  // A deadlock or a serialization failure rolls the transaction back.
  busy: (code) => code === '40P01' || code === '40001',
}
