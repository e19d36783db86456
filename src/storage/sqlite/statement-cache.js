// JavaScript, not TypeScript: the SQLite writer thread imports it at run time, from src/ and dist/ alike.

/** @import { SqlResult } from '../sql/sql-database.js' */

/**
 * The slices of a better-sqlite3 statement and connection that the cache uses.
 * @typedef {{
 *   reader: boolean,
 *   readonly: boolean,
 *   all(...parameters: unknown[]): unknown[],
 *   run(...parameters: unknown[]): { changes: number },
 *   raw(toggle: boolean): SqliteStatement,
 *   columns(): Array<{ name: string }>,
 * }} SqliteStatement
 * @typedef {{ prepare(sql: string): SqliteStatement }} SqliteConnection
 */

/**
 * A prepared statement and, for one that returns rows, the names of its columns: its rows come from SQLite as arrays
 * (better-sqlite3's raw mode) and are made into records here, with the names read once. Without raw mode,
 * better-sqlite3 looks each column's name up in V8's string table again for every row it returns, which cost an
 * account read (13 columns) more than its lookup did (docs/performance.md, "Profiles and providers").
 * @typedef {{ statement: SqliteStatement, names: string[] | null }} Prepared
 */

/**
 * Runs statements on one better-sqlite3 connection, each prepared the first time its text is run and kept for the
 * life of the connection: preparing costs more than running a primary-key lookup, so a call only binds values.
 * Used by the reads on the event loop (sqlite-executor.ts) and by the writer thread (sqlite-writer-thread.js).
 * @param {SqliteConnection} connection
 */
export function createStatementCache(connection) {
  /** @type {Map<string, Prepared>} */
  const statements = new Map()
  return {
    /**
     * Runs one statement at once, on this thread; throws what SQLite throws.
     * @param {string} sql
     * @param {readonly unknown[]} parameters
     * @returns {SqlResult}
     */
    run(sql, parameters) {
      let prepared = statements.get(sql)
      if (prepared === undefined) {
        prepared = prepare(connection, sql)
        statements.set(sql, prepared)
      }
      const { statement, names } = prepared
      if (names === null) return { rows: [], changes: statement.run(...parameters).changes }
      const rows = records(names, /** @type {unknown[][]} */ (statement.all(...parameters)))
      // a write with RETURNING returns one row per row it changed
      return { rows, changes: statement.readonly ? 0 : rows.length }
    },
  }
}

/**
 * @param {SqliteConnection} connection
 * @param {string} sql
 * @returns {Prepared}
 */
function prepare(connection, sql) {
  const statement = connection.prepare(sql)
  if (!statement.reader) return { statement, names: null }
  return { statement: statement.raw(true), names: statement.columns().map((column) => column.name) }
}

/**
 * Rows of raw mode as records keyed by their column names; a name that appears twice keeps its last value, as
 * better-sqlite3's own records do.
 * @param {string[]} names
 * @param {unknown[][]} rows
 * @returns {Record<string, unknown>[]}
 */
function records(names, rows) {
  const result = new Array(rows.length)
  for (let r = 0; r < rows.length; r++) {
    const row = /** @type {unknown[]} */ (rows[r])
    /** @type {Record<string, unknown>} */
    const record = {}
    for (let c = 0; c < names.length; c++) record[/** @type {string} */ (names[c])] = row[c]
    result[r] = record
  }
  return result
}
