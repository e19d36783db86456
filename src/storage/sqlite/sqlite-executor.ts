import type { SqlResult } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import { createStatementCache, type SqliteConnection } from './statement-cache.js'

/** Runs statements on one connection on the event loop (the reads), as promises, each prepared once. */
export function createSqliteExecutor(connection: SqliteConnection) {
  const cache = createStatementCache(connection)
  const rollBack = () => {
    try {
      cache.run('ROLLBACK', [])
    } catch {
      // SQLite ended the transaction itself (a full disk): the statement's error is the one to report
    }
  }
  return {
    run(sql: string, parameters: readonly unknown[]): Promise<SqlResult> {
      try {
        return Promise.resolve(cache.run(sql, parameters))
      } catch (error) {
        return Promise.reject(error)
      }
    },
    /**
     * Runs statements in order in one transaction, all or none: the writes of an in-memory database, which has no
     * writer thread (sqlite-database.ts).
     */
    runAll(queries: readonly SqlQuery[]): Promise<SqlResult[]> {
      try {
        cache.run('BEGIN', [])
        try {
          const results = queries.map(({ sql, parameters }) => cache.run(sql, parameters))
          cache.run('COMMIT', [])
          return Promise.resolve(results)
        } catch (error) {
          rollBack()
          throw error
        }
      } catch (error) {
        return Promise.reject(error)
      }
    },
  }
}
