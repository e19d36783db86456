import { CompiledQuery, type Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { StorageAttempt } from '../storage-call.js'
import type { SqlQuery, SqlStatements } from './sql-statements.js'
import type { Tables } from './tables.js'

/** The SQL engines Tessera runs on; also the folder of each one's migrations (migrations/<engine>/). */
export type SqlEngine = 'sqlite' | 'postgres' | 'mysql'

/**
 * What a statement returned: its rows (a SELECT, or a write's RETURNING) and how many rows it changed (an INSERT,
 * UPDATE, DELETE; one per row a RETURNING returns).
 */
export interface SqlResult {
  rows: Record<string, unknown>[]
  changes: number
  /**
   * A write's LAST_INSERT_ID, from MySQL's answer (its OK packet): how a MySQL statement, which has no RETURNING,
   * reports a value it computed, with LAST_INSERT_ID(expr). Absent from the other engines, and from reads.
   */
  lastInsertId?: bigint
}

/** One open SQL database: what the shared SQL stores and the migrations need from an engine. */
export interface SqlDatabase {
  engine: SqlEngine
  /** The stores' statements in this engine's SQL. */
  statements: SqlStatements
  /** Kysely on the same database, for the migrations (and the benchmark's bulk seeding); the stores do not use it. */
  db: Kysely<Tables>
  /**
   * True for SQLite: reads run on the event loop, where a timeout could never fire before they return, and writes
   * wait at most for SQLite's busy timeout. No storage call on it gets a timer.
   */
  synchronous: boolean
  /** Runs one statement. */
  run(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /**
   * Runs one statement that writes. Resolves once it is durable. SQLite commits writes in groups on a thread of its
   * own (one fsync for each group), each in a savepoint of its own so one failing leaves the others be; the servers
   * commit each in a transaction of its own (see writeInTransaction), which `attempt` can still abandon.
   */
  write(sql: string, parameters: readonly unknown[], attempt?: StorageAttempt): Promise<SqlResult>
  /**
   * Runs statements that write, in order, in one transaction: all of them take effect or none does (one failing
   * undoes those before it). Resolves with each one's result once the transaction is durable. SQLite runs them in one
   * savepoint of its writer's group; the servers between one BEGIN and COMMIT (writeAllInTransaction), which
   * `attempt` can still abandon. A SELECT among them (a server's row lock, FOR UPDATE) reports its rows.
   */
  writeAll(queries: readonly SqlQuery[], attempt?: StorageAttempt): Promise<SqlResult[]>
  /** True for a violated UNIQUE or PRIMARY KEY constraint. */
  isUniqueViolation(error: unknown): boolean
  /**
   * Runs `fn` on one connection while holding a lock that other processes migrating the same database wait for.
   * SQLite's lock is a write transaction around the whole run; a server's is a named lock, waited for by `clock`.
   */
  withMigrationLock<T>(fn: (connection: Kysely<Tables>) => Promise<T>, clock: Clock): Promise<T>
  /** Whether each migration file may run in its own transaction (DDL is transactional). */
  transactionalMigrations: boolean
  /** Where the database is, without credentials, for the start-up log line. */
  description: string
  /** Finishes the writes in flight and closes every connection. */
  close(): Promise<void>
}

/** `run` for the engines that have a server: the statement through Kysely's driver and its connection pool. */
export async function runPooled(
  db: Kysely<Tables>,
  sql: string,
  parameters: readonly unknown[],
): Promise<SqlResult> {
  const result = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(sql, [...parameters]))
  return { rows: [...result.rows], changes: Number(result.numAffectedRows ?? 0) }
}

/** One pooled connection of a database server, as writeInTransaction uses it. */
export interface WriteConnection {
  query(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /** Gives the connection back to the pool. */
  release(): void
  /** Closes the connection: the server rolls back whatever transaction it has open. */
  destroy(): void
}

/**
 * docs/api.md R7.2: a statement on a server, in a transaction of its own that commits only while the caller still
 * waits (writeAllInTransaction with one statement).
 */
export async function writeInTransaction(
  acquire: () => Promise<WriteConnection>,
  sql: string,
  parameters: readonly unknown[],
  attempt: StorageAttempt | undefined,
): Promise<SqlResult> {
  const [result] = await writeAllInTransaction(acquire, [{ sql, parameters }], attempt)
  return result as SqlResult
}

/**
 * docs/api.md R7.2: statements on a server, in one transaction of their own that commits only while the caller still
 * waits. A statement sent to a server that stops answering (paused, overloaded, cut off) may run when it resumes;
 * in autocommit it would take effect then, long after the client was told it failed. Here they run between BEGIN
 * and a COMMIT sent only if `attempt` is still waiting once the last statement has answered. When the caller stops
 * waiting first, the connection is closed at once, so the server rolls the transaction back whenever it gets to
 * it (a paused server reads the statement, then the end of the connection). Only a failure after COMMIT was sent
 * leaves the outcome unknown. The cost is two more round trips per write.
 */
export async function writeAllInTransaction(
  acquire: () => Promise<WriteConnection>,
  queries: readonly SqlQuery[],
  attempt: StorageAttempt | undefined,
): Promise<SqlResult[]> {
  const connection = await acquire()
  // the pool took longer than the caller waits (no wait for a connection outlives its caller): nothing was sent
  if (attempt?.signal.aborted) {
    connection.release()
    throw attempt.signal.reason
  }
  let finished = false
  const finish = (reuse: boolean) => {
    if (finished) return
    finished = true
    attempt?.signal.removeEventListener('abort', abandon)
    if (reuse) connection.release()
    else connection.destroy()
  }
  const abandon = () => finish(false)
  attempt?.signal.addEventListener('abort', abandon, { once: true })
  try {
    await connection.query('BEGIN', [])
    const results: SqlResult[] = []
    try {
      for (const { sql, parameters } of queries) results.push(await connection.query(sql, parameters))
    } catch (error) {
      // a statement failed (a unique violation): roll back and keep the connection
      if (!finished) {
        await connection.query('ROLLBACK', []).then(
          () => finish(true),
          () => finish(false),
        )
      }
      throw error
    }
    if (attempt !== undefined && !attempt.commit()) throw new Error('abandoned before COMMIT')
    await connection.query('COMMIT', [])
    finish(true)
    return results
  } catch (error) {
    // a connection in an unknown state (a transaction open, an answer pending) is never reused
    finish(false)
    throw error
  }
}
