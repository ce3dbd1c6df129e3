/**
 * The schema of the pets table in each SQL dialect, migration by migration:
 * history, never edited once released. A new field of the pet is a new
 * migration here per dialect, adding its column (see `PetField.sqlType`).
 * Each statement is idempotent (`if not exists`), so two processes racing
 * past the migration lock of a dialect that has none (SQLite) still end with
 * one schema. No kysely here: the D1 store runs SQLite's migrations itself.
 *
 * @module
 */
import { type HotPathTarget, qualifiedTable, quoteName } from './hot-path.js'

/** The SQL text of each migration, by name; they run in the order of their names. */
export type Migrations = Readonly<Record<string, readonly string[]>>

/**
 * The table of `target`'s generation, `<table>_reset_gen` beside it: one row, whose number a
 * reset or a seed adds 1 to in its transaction, and each page reads in its statement. A cursor
 * is issued in one generation and refused in another (see src/api/cursor.ts). Named after the
 * pets table, so a namespace's table has its own. Kept in the database, so that every process
 * on it (`--workers`, replicas) agrees.
 */
export const generationTable = ({ table, schema }: HotPathTarget): HotPathTarget => ({
  table: `${table}_reset_gen`,
  schema,
})

// SQLite

/** The index `<table><suffix>`, quoted, in the table's schema where it has one. */
function indexName({ table, schema }: HotPathTarget, suffix: string): string {
  return `${schema === undefined ? '' : `${quoteName(schema)}.`}${quoteName(`${table}${suffix}`)}`
}

/**
 * Migration 0001: the pets table and its index, each idempotent (`if not exists`). The text is
 * what kysely's schema builder wrote before it moved here, so a database made then and one made
 * now hold the same schema. In an attached `schema`, SQLite names the index's schema, not its table's.
 */
export function sqlitePetsSchema(target: HotPathTarget): string[] {
  return [
    // SQLite's AUTOINCREMENT never hands out an id again.
    `create table if not exists ${qualifiedTable(target)} ("id" integer primary key autoincrement, "name" text not null, "category_id" bigint not null, "status" varchar(16))`,
    `create index if not exists ${indexName(target, '_status_id')} on ${quoteName(target.table)} ("status", "id")`,
  ]
}

/**
 * Migration 0002: the page by status read from its index alone. The index of 0001 holds
 * `(status, id)`, so each pet of a page was then looked up in the table by its id; this one
 * holds the page's other columns too (`name`, `category_id`), and a page of 100 `sold` pets
 * read no row of the table. Its name is as long as the
 * old one's, so the bound on a table's name stays.
 */
export function sqliteStatusIndex(target: HotPathTarget): string[] {
  return [
    `create index if not exists ${indexName(target, '_by_status')} on ${quoteName(target.table)} ("status", "id", "name", "category_id")`,
    `drop index if exists ${indexName(target, '_status_id')}`,
  ]
}

/**
 * The table of idempotency keys beside the pets table of `target`, named after it: a pets table of
 * its own (a namespace's) has keys of its own. Its suffixes are no longer than `_status_id`, so
 * every pets table name that was valid stays valid.
 */
export const keysTable = ({ table, schema }: HotPathTarget): HotPathTarget => ({ table: `${table}_idem_keys`, schema })

/** The index of the keys' expiry, by which expired keys are deleted without a scan. */
const KEYS_EXPIRY = '_idem_exp'

/**
 * Migration 0003: the idempotency keys, one row per API key's label (`scope`) and key, with the
 * payload's fingerprint, the pet it created and when it expires (ms since the epoch).
 */
export function sqliteKeysSchema(target: HotPathTarget): string[] {
  const keys = keysTable(target)
  return [
    `create table if not exists ${qualifiedTable(keys)} ("scope" text not null, "key" text not null, "fingerprint" text not null, "pet_id" integer not null, "expires_at" integer not null, primary key ("scope", "key"))`,
    `create index if not exists ${indexName(target, KEYS_EXPIRY)} on ${quoteName(keys.table)} ("expires_at")`,
  ]
}

/** The schema of `target`, migration by migration. */
export const sqliteMigrations = (target: HotPathTarget): Migrations => ({
  '0001_create_pets': sqlitePetsSchema(target),
  '0002_status_index_covers_pages': sqliteStatusIndex(target),
  '0003_idempotency_keys': sqliteKeysSchema(target),
  '0004_generation': sqliteGeneration(target),
})

/** Migration 0004: the {@link generationTable} and its one row, each idempotent. */
export function sqliteGeneration(target: HotPathTarget): string[] {
  const table = qualifiedTable(generationTable(target))
  return [
    `create table if not exists ${table} (id integer primary key, generation integer not null)`,
    `insert or ignore into ${table} values (1, 0)`,
  ]
}

// PostgreSQL

/**
 * The schema of `target`, migration by migration: the text kysely's schema builder wrote for
 * 0001 before it moved here (test/sql-schema.test.ts compares them), so a database made then and
 * one made now hold the same schema. 0002 is SQLite's alone: PostgreSQL keeps the index of 0001.
 */
export function postgresMigrations(target: HotPathTarget): Migrations {
  const from = qualifiedTable(target)
  return {
    '0001_create_pets': [
      `create table if not exists ${from} ("id" bigserial primary key, "name" text not null, "category_id" bigint not null, "status" varchar(16))`,
      `create index if not exists ${quoteName(`${target.table}_status_id`)} on ${from} ("status", "id")`,
    ],
    '0002_status_index_covers_pages': [],
    '0003_idempotency_keys': [
      `create table if not exists ${qualifiedTable(keysTable(target))} ("scope" text not null, "key" text not null, "fingerprint" text not null, "pet_id" bigint not null, "expires_at" bigint not null, primary key ("scope", "key"))`,
      `create index if not exists ${quoteName(`${target.table}${KEYS_EXPIRY}`)} on ${qualifiedTable(keysTable(target))} ("expires_at")`,
    ],
    '0004_generation': [
      `create table if not exists ${qualifiedTable(generationTable(target))} ("id" integer primary key, "generation" bigint not null)`,
      `insert into ${qualifiedTable(generationTable(target))} ("id", "generation") values (1, 0) on conflict do nothing`,
    ],
  }
}

// MySQL and MariaDB

/** `` `table` ``: MySQL quotes identifiers with backticks (double quotes only under ANSI_QUOTES). */
export const mysqlName = (name: string) => `\`${name.replaceAll('`', '``')}\``

/** `` `schema`.`table` `` (or `` `table` ``). */
export const mysqlTable = ({ table, schema }: HotPathTarget) =>
  schema === undefined ? mysqlName(table) : `${mysqlName(schema)}.${mysqlName(table)}`

/**
 * The schema of `target`, migration by migration. MySQL 8 has no `create index if not exists`:
 * the index is declared with the table. utf8mb4 spelled out, as MariaDB may default to latin1:
 * names hold any Unicode, 255 code points. 0002 is SQLite's alone.
 */
export function mysqlMigrations(target: HotPathTarget): Migrations {
  return {
    '0001_create_pets': [
      `create table if not exists ${mysqlTable(target)} (
  id bigint not null auto_increment primary key,
  name varchar(255) not null,
  category_id bigint not null,
  status varchar(16),
  index ${mysqlName(`${target.table}_status_id`)} (status, id)
) default character set utf8mb4 collate utf8mb4_bin`,
    ],
    '0002_status_index_covers_pages': [],
    // ASCII and binary: keys are visible ASCII, compared byte for byte (`Abc` is not `abc`).
    '0003_idempotency_keys': [
      `create table if not exists ${mysqlTable(keysTable(target))} (
  scope varchar(64) not null,
  \`key\` varchar(255) not null,
  fingerprint char(64) not null,
  pet_id bigint not null,
  expires_at bigint not null,
  primary key (scope, \`key\`),
  index ${mysqlName(`${target.table}${KEYS_EXPIRY}`)} (expires_at)
) default character set ascii collate ascii_bin`,
    ],
    '0004_generation': [
      `create table if not exists ${mysqlTable(generationTable(target))} (id int not null primary key, generation bigint not null)`,
      `insert ignore into ${mysqlTable(generationTable(target))} (id, generation) values (1, 0)`,
    ],
  }
}
