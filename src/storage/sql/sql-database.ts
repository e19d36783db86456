import { CompiledQuery, type Kysely } from 'kysely'
import type { Database } from './schema.js'

export type SqlDialectName = 'sqlite' | 'postgres' | 'mysql'

/** What a statement returned: its rows (a SELECT) and how many rows it changed (an INSERT, UPDATE, DELETE). */
export interface SqlResult {
  rows: Record<string, unknown>[]
  changes: number
}

/** What differs between the SQL engines; everything else is shared Kysely code in storage/sql/. */
export interface SqlDialect {
  name: SqlDialectName
  /** Kysely on the database: builds the stores' queries and runs the migrations. */
  db: Kysely<Database>
  /**
   * True for SQLite: reads run on the event loop, where a timeout could never fire before they return, and writes
   * wait at most for SQLite's busy timeout. No storage call on it gets a timer.
   */
  synchronous: boolean
  /** Runs one compiled statement. */
  run(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /**
   * Runs one compiled statement that writes. Resolves once it is durable. SQLite commits writes in groups on a
   * thread of its own (one fsync for each group), each in a savepoint of its own so one failing leaves the others
   * be; the servers commit each on its own.
   */
  write(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /** True for a violated UNIQUE or PRIMARY KEY constraint. */
  isUniqueViolation(error: unknown): boolean
  /**
   * Runs `fn` on one connection while holding a lock that other processes migrating the same database wait for.
   * SQLite's lock is a write transaction around the whole run.
   */
  withMigrationLock<T>(fn: (connection: Kysely<Database>) => Promise<T>): Promise<T>
  /** Whether each migration file may run in its own transaction (DDL is transactional). */
  transactionalMigrations: boolean
  /** INSERT … ON CONFLICT (SQLite, PostgreSQL) or ON DUPLICATE KEY UPDATE (MySQL). */
  upsertSyntax: 'on-conflict' | 'on-duplicate-key'
  /** Where the store lives, without credentials, for the start-up log line. */
  description: string
  /** Finishes the writes in flight and closes every connection. */
  close(): Promise<void>
}

/** `run` for the engines that have a server: the statement through Kysely's driver and its pool. */
export async function runCompiled(
  db: Kysely<Database>,
  sql: string,
  parameters: readonly unknown[],
): Promise<SqlResult> {
  const result = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(sql, [...parameters]))
  return { rows: [...result.rows], changes: Number(result.numAffectedRows ?? 0) }
}
