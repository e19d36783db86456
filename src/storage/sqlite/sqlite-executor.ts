import type BetterSqlite3 from 'better-sqlite3'
import type { SqlResult } from '../sql/sql-dialect.js'

type Statement = BetterSqlite3.Statement<unknown[]>

interface PendingWrite {
  statement: Statement
  parameters: readonly unknown[]
  resolve(result: SqlResult): void
  reject(error: unknown): void
}

/**
 * Runs compiled statements on one better-sqlite3 connection: statements are prepared once and reused, and writes
 * are committed in groups.
 *
 * better-sqlite3 is synchronous, and with synchronous=FULL each commit waits for an fsync on the event loop. Writes
 * that arrive in one event-loop turn are therefore run in one IMMEDIATE transaction, at the next turn, and each
 * caller is answered only after that transaction's COMMIT: the same durability as a commit per write, one fsync for
 * the group. Each write runs in a savepoint of its own, so a failing one (a duplicate e-mail) is rolled back alone.
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
  const execute = (statement: Statement, parameters: readonly unknown[]): SqlResult =>
    statement.reader
      ? { rows: statement.all(...parameters) as Record<string, unknown>[], changes: 0 }
      : { rows: [], changes: statement.run(...parameters).changes }

  let pending: PendingWrite[] = []
  const inSavepoint = database.transaction(execute)
  const commitGroup = database.transaction((group: PendingWrite[]) =>
    group.map((write) => {
      try {
        return { ok: true as const, result: inSavepoint(write.statement, write.parameters) }
      } catch (error) {
        return { ok: false as const, error }
      }
    }),
  )
  const flush = () => {
    const group = pending
    pending = []
    let outcomes: ReturnType<typeof commitGroup>
    try {
      outcomes = commitGroup.immediate(group)
    } catch (error) {
      for (const write of group) write.reject(error)
      return
    }
    group.forEach((write, i) => {
      const outcome = outcomes[i]
      if (outcome?.ok) write.resolve(outcome.result)
      else write.reject(outcome?.error)
    })
  }

  return {
    run(sql: string, parameters: readonly unknown[]): Promise<SqlResult> {
      try {
        return Promise.resolve(execute(prepare(sql), parameters))
      } catch (error) {
        return Promise.reject(error)
      }
    },
    write(sql: string, parameters: readonly unknown[]): Promise<SqlResult> {
      let statement: Statement
      try {
        statement = prepare(sql)
      } catch (error) {
        return Promise.reject(error)
      }
      return new Promise((resolve, reject) => {
        pending.push({ statement, parameters, resolve, reject })
        if (pending.length === 1) setImmediate(flush)
      })
    },
  }
}
