import type { SqlResult } from '../sql/sql-database.js'
import { createStatementCache, type SqliteConnection } from './statement-cache.js'

/** Runs statements on one connection on the event loop (the reads), as promises, each prepared once. */
export function createSqliteExecutor(connection: SqliteConnection) {
  const cache = createStatementCache(connection)
  return {
    run(sql: string, parameters: readonly unknown[]): Promise<SqlResult> {
      try {
        return Promise.resolve(cache.run(sql, parameters))
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
}
