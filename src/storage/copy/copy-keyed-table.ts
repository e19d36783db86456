import type { Kysely } from 'kysely'
import { runPooled, type SqlEngine } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import type { Tables } from '../sql/tables.js'
import { type Checksum, runningChecksum } from './checksum.js'
import { insertLeavingExisting, placeholderFor, type Read, valuesList } from './copy-statements.js'

/** What the copy of one table did, and what each side holds of the source's rows. */
export interface RowsCopy {
  /** Rows written by this run (a row the target held already is left as it is). */
  copied: number
  source: Checksum
  target: Checksum
}

type Row = Record<string, unknown>

/** A table the copy moves row for row, by its primary key, whatever account a row is about (if any). */
export interface KeyedTable {
  name: string
  /** The columns copied and compared, the primary key's first. */
  columns: readonly string[]
  /** The number of primary-key columns at the start of `columns`. */
  keyWidth: number
  /** The columns that hold integers (PostgreSQL returns a BIGINT as a string). */
  integers: ReadonlySet<string>
  /**
   * The columns that hold flags (a BOOLEAN in PostgreSQL, which returns true or false; 0 or 1 in SQLite and MySQL):
   * copied and compared as 1 or 0, which PostgreSQL reads as a BOOLEAN's values.
   */
  flags?: ReadonlySet<string>
  /** The columns that hold bytes (BLOB, BYTEA, MEDIUMBLOB): copied as bytes, compared as base64. */
  binaries?: ReadonlySet<string>
  /** Rows per batch at most, whatever --batch-size says. */
  maxBatch: number
  /** A condition on the source's rows: only those are copied. */
  copiedOnly?: { sql: string; value: unknown }
  /**
   * The select list that reads a source's rows as `columns` (a source of an earlier version); `columns` themselves
   * when absent.
   */
  sourceSelect?: string
}

/**
 * Copies `table` when the source has it (null when it is of a version before the table). It is read from the source
 * in its primary key's order, in batches; each batch is written in one INSERT that leaves a row already there as it
 * is, then the target's rows with the batch's keys are read back and compared, so every run (resumed or forced) goes
 * over every row of the source. A target's own rows with other keys are not compared.
 */
export function copyKeyedTable(
  table: KeyedTable,
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; tables: readonly string[] },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  batchSize: number,
): Promise<RowsCopy | null> {
  if (!source.tables.includes(table.name)) return Promise.resolve(null)
  return copyTable(table, readSource, readTarget, source.engine, target, batchSize)
}

async function copyTable(
  table: KeyedTable,
  readSource: Read,
  readTarget: Read,
  sourceEngine: SqlEngine,
  target: { engine: SqlEngine; db: Kysely<Tables> },
  batchSize: number,
): Promise<RowsCopy> {
  const limit = Math.min(batchSize, table.maxBatch)
  const sums = { source: runningChecksum(), target: runningChecksum() }
  let copied = 0
  let last: unknown[] | null = null
  for (;;) {
    const rows = (await readSource(batchAfter(table, sourceEngine, last, limit))).map((row) =>
      valuesOf(table, row),
    )
    if (rows.length === 0) break
    const insert = insertLeavingExisting(
      target.engine,
      table.name,
      table.columns.join(', '),
      rows.length,
      table.columns.length,
    )
    copied += (await runPooled(target.db, insert, rows.flat())).changes
    sums.source.add(lines(rows))
    const held = await readTarget(withKeysOf(table, target.engine, rows))
    sums.target.add(lines(held.map((row) => valuesOf(table, row))))
    last = rows[rows.length - 1] as unknown[]
  }
  return { copied, source: sums.source.result(), target: sums.target.result() }
}

/** Up to `limit` of the source's rows after the row `last` (its values; null for the first), by primary key. */
function batchAfter(table: KeyedTable, engine: SqlEngine, last: unknown[] | null, limit: number): SqlQuery {
  const placeholder = placeholderFor(engine)
  const key = table.columns.slice(0, table.keyWidth)
  const conditions: string[] = []
  const parameters: unknown[] = []
  if (table.copiedOnly !== undefined) {
    parameters.push(table.copiedOnly.value)
    conditions.push(`${table.copiedOnly.sql} ${placeholder(parameters.length)}`)
  }
  if (last !== null) {
    // a row value compares column after column, in the order ORDER BY uses: the keyset of a composite key
    const after = key.map((_, index) => placeholder(parameters.length + index + 1))
    parameters.push(...last.slice(0, table.keyWidth))
    conditions.push(`(${key.join(', ')}) > (${after.join(', ')})`)
  }
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  return {
    sql: `SELECT ${table.sourceSelect ?? table.columns.join(', ')} FROM ${table.name} ${where}
      ORDER BY ${key.join(', ')} LIMIT ${Math.trunc(limit)}`,
    parameters,
  }
}

/** The target's rows with the primary keys of `rows` (their values). */
function withKeysOf(table: KeyedTable, engine: SqlEngine, rows: readonly unknown[][]): SqlQuery {
  const key = table.columns.slice(0, table.keyWidth)
  return {
    sql: `SELECT ${table.columns.join(', ')} FROM ${table.name}
      WHERE (${key.join(', ')}) IN (${valuesList(engine, rows.length, table.keyWidth)})`,
    parameters: rows.flatMap((row) => row.slice(0, table.keyWidth)),
  }
}

/**
 * A row's values in `columns` order, each engine's alike: integers as numbers, flags as 1 or 0, bytes as a Buffer,
 * text as text, NULL as null.
 */
function valuesOf(table: KeyedTable, row: Row): unknown[] {
  return table.columns.map((column) => {
    const value = row[column]
    if (value === null || value === undefined) return null
    if (table.flags?.has(column)) return value === true || Number(value) === 1 ? 1 : 0
    if (table.binaries?.has(column)) return Buffer.from(value as Uint8Array)
    return table.integers.has(column) ? Number(value) : String(value)
  })
}

/**
 * A batch's rows as lines of the checksum, as JSON (bytes as base64), in one order whatever order each side returned
 * them in.
 */
function lines(rows: readonly unknown[][]): string[] {
  return rows
    .map(
      (row) =>
        `${JSON.stringify(row.map((value) => (Buffer.isBuffer(value) ? value.toString('base64') : value)))}\n`,
    )
    .sort()
}
