import type BetterSqlite3 from 'better-sqlite3'
import type { SqlResult } from '../sql/sql-dialect.js'

type Statement = BetterSqlite3.Statement<unknown[]>

/**
 * Runs compiled statements on one better-sqlite3 connection, each prepared once and kept for the life of the
 * connection (preparing costs more than running a primary-key lookup).
 */
export function createSqliteExecutor(database: BetterSqlite3.Database) {
  const statements = new Map<string, Statement>()
  const prepare = (sql: string): Statement => {
    let statement = statements.get(sql)
    if (statement === undefined) {
      statement = database.prepare(sql)
      statements.set(sql, statement)
    }
    return statement
  }

  return {
    run(sql: string, parameters: readonly unknown[]): Promise<SqlResult> {
      try {
        const statement = prepare(sql)
        return Promise.resolve(
          statement.reader
            ? { rows: statement.all(...parameters) as Record<string, unknown>[], changes: 0 }
            : { rows: [], changes: statement.run(...parameters).changes },
        )
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
}
