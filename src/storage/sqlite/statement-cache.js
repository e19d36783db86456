// JavaScript, not TypeScript: the SQLite writer thread imports it at run time, from src/ and dist/ alike.

/** @import { SqlResult } from '../sql/sql-database.js' */

/**
 * The slices of a better-sqlite3 statement and connection that the cache uses.
 * @typedef {{
 *   reader: boolean,
 *   readonly: boolean,
 *   all(...parameters: unknown[]): unknown[],
 *   run(...parameters: unknown[]): { changes: number },
 * }} SqliteStatement
 * @typedef {{ prepare(sql: string): SqliteStatement }} SqliteConnection
 */

/**
 * Runs statements on one better-sqlite3 connection, each prepared the first time its text is run and kept for the
 * life of the connection: preparing costs more than running a primary-key lookup, so a call only binds values.
 * Used by the reads on the event loop (sqlite-executor.ts) and by the writer thread (sqlite-writer-thread.js).
 * @param {SqliteConnection} connection
 */
export function createStatementCache(connection) {
  /** @type {Map<string, SqliteStatement>} */
  const statements = new Map()
  return {
    /**
     * Runs one statement at once, on this thread; throws what SQLite throws.
     * @param {string} sql
     * @param {readonly unknown[]} parameters
     * @returns {SqlResult}
     */
    run(sql, parameters) {
      let statement = statements.get(sql)
      if (statement === undefined) {
        statement = connection.prepare(sql)
        statements.set(sql, statement)
      }
      if (!statement.reader) return { rows: [], changes: statement.run(...parameters).changes }
      const rows = /** @type {Record<string, unknown>[]} */ (statement.all(...parameters))
      // a write with RETURNING returns one row per row it changed
      return { rows, changes: statement.readonly ? 0 : rows.length }
    },
  }
}
