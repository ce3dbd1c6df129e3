/**
 * The pet's columns as every SQL dialect writes them, made from `PET_FIELDS`
 * once: the select list, the insert list and its values, and a pet as JSON
 * text built by the database. A new field of the pet changes none of this.
 *
 * @module
 */
import { PET_FIELDS, type PetField, type SqlDialect } from '../../api/pet-fields.js'
import type { NewPet } from '../../api/schemas.js'
import { fieldValues } from '../pet-record.js'

/** The columns after `id`, in the order of `PET_FIELDS`. */
export const PET_COLUMNS: readonly string[] = PET_FIELDS.map((field) => field.column)

/** `name, …`: the columns an insert names. */
export const INSERTED_COLUMNS = PET_COLUMNS.join(', ')

/** `?, ?, ?`: one positional parameter per inserted column. */
export const INSERTED_PARAMETERS = PET_COLUMNS.map(() => '?').join(', ')

/**
 * The columns of a pet as a statement selects them, `id` first: an int64 column as decimal text,
 * which every driver reads exactly (a number beyond 2^53 would be rounded, or refused). MySQL
 * casts to `char`, the others to `text`.
 */
export function selectedColumns(dialect: SqlDialect): string {
  const text = dialect === 'mysql' ? 'char' : 'text'
  const columns = PET_FIELDS.map(({ column, kind }) =>
    kind === 'int64' ? `cast(${column} as ${text}) as ${column}` : column,
  )
  return ['id', ...columns].join(', ')
}

/** The columns of a pet as stored, `id` first: what a page written as JSON reads. */
export const STORED_COLUMNS = ['id', ...PET_COLUMNS].join(', ')

/** The values an insert binds for `pet`, in column order: NULL for an absent field. */
export function insertedValues(pet: NewPet): unknown[] {
  const values = fieldValues(pet)
  for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = null
  return values
}

/** The row `replacePets` inserts for `pet`, by column. */
export function rowOf(pet: NewPet & { id: number }): Record<string, unknown> {
  const row: Record<string, unknown> = { id: pet.id }
  const values = insertedValues(pet)
  for (let i = 0; i < PET_COLUMNS.length; i++) row[PET_COLUMNS[i] as string] = values[i]
  return row
}

/** `text` as an SQL string literal. */
const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`

/**
 * A pet as a JSON object built by SQLite, keys in the schema's order, with no key for a NULL
 * optional column: one `json_object` per combination of optional columns, chosen by `case`.
 */
export function sqlitePetJson(): string {
  const optional = PET_FIELDS.filter((field) => field.optional)
  const object = (present: ReadonlySet<PetField>) => {
    const pairs = PET_FIELDS.filter((field) => !field.optional || present.has(field)).map(
      ({ key, column }) => `${sqlText(key)}, ${column}`,
    )
    return `json_object('id', id, ${pairs.join(', ')})`
  }
  const choose = (index: number, present: ReadonlySet<PetField>): string => {
    const field = optional[index]
    if (field === undefined) return object(present)
    const without = choose(index + 1, present)
    const withIt = choose(index + 1, new Set([...present, field]))
    return `case when ${field.column} is null then ${without} else ${withIt} end`
  }
  return choose(0, new Set())
}

/**
 * A pet as JSON text built by PostgreSQL: concatenated, the strings escaped by `to_json`, as
 * `json_build_object` would put spaces in. An optional column adds nothing when NULL.
 */
export function postgresPetJson(): string {
  const parts = PET_FIELDS.map(({ key, column, kind, optional }) => {
    const value = kind === 'int64' ? column : `to_json(${column})::text`
    const pair = sqlText(`,${JSON.stringify(key)}:`)
    return optional ? `coalesce(${pair} || ${value}, '')` : `${pair} || ${value}`
  })
  return [`'{"id":' || id`, ...parts, `'}'`].join(' || ')
}

/** PostgreSQL's type of each field's parameter: `bigint` for int64, `text` for the others. */
export const postgresTypes: readonly string[] = PET_FIELDS.map((field) => (field.kind === 'int64' ? 'bigint' : 'text'))
