import type { Kysely } from 'kysely'
import type { Database } from './schema.js'

export type SqlDialectName = 'sqlite' | 'postgres' | 'mysql'

/** What differs between the SQL engines; everything else is shared Kysely code in storage/sql/. */
export interface SqlDialect {
  name: SqlDialectName
  db: Kysely<Database>
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
}
