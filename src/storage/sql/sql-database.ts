import { CompiledQuery, type Kysely } from 'kysely'
import type { SqlStatements } from './sql-statements.js'
import type { Tables } from './tables.js'

/** The SQL engines Tessera runs on; also the folder of each one's migrations (migrations/<engine>/). */
export type SqlEngine = 'sqlite' | 'postgres' | 'mysql'

/** What a statement returned: its rows (a SELECT) and how many rows it changed (an INSERT, UPDATE, DELETE). */
export interface SqlResult {
  rows: Record<string, unknown>[]
  changes: number
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
   * commit each on its own.
   */
  write(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /** True for a violated UNIQUE or PRIMARY KEY constraint. */
  isUniqueViolation(error: unknown): boolean
  /**
   * Runs `fn` on one connection while holding a lock that other processes migrating the same database wait for.
   * SQLite's lock is a write transaction around the whole run.
   */
  withMigrationLock<T>(fn: (connection: Kysely<Tables>) => Promise<T>): Promise<T>
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
