import { readdirSync, readFileSync } from 'node:fs'
import { type Kysely, sql } from 'kysely'
import type { Clock } from '../../clock.js'
import { PACKAGE_ROOT } from '../../package-root.js'
import type { SqlDatabase, SqlEngine } from './sql-database.js'
import type { Tables } from './tables.js'

const MIGRATIONS_ROOT = new URL('migrations/', PACKAGE_ROOT)
const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/

export interface Migration {
  version: number
  name: string
  statements: string[]
}

/**
 * The migrations of an engine, in version order: migrations/<engine>/NNNN_name.sql, up-only. Read synchronously: the
 * package's own dozen files, read at every start before the port opens (promised reads cost a cold start some
 * milliseconds of round trips to libuv's threads, docs/performance.md, issue 34).
 */
export function readMigrations(engine: SqlEngine): Migration[] {
  const directory = new URL(`${engine}/`, MIGRATIONS_ROOT)
  const files = readdirSync(directory)
    .filter((file) => FILE_NAME.test(file))
    .sort()
  return files.map((file) => ({
    version: Number(file.slice(0, 4)),
    name: file,
    statements: splitStatements(readFileSync(new URL(file, directory), 'utf8')),
  }))
}

/** Statements end with a semicolon at the end of a line; comment-only chunks are dropped. */
export function splitStatements(text: string): string[] {
  return text
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')))
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, under the database's migration lock: instances that
 * start together wait for each other, and none applies a migration twice. Each is recorded as applied at `clock`'s
 * time. Returns the names applied.
 */
export async function migrate(database: SqlDatabase, clock: Clock): Promise<string[]> {
  const migrations = readMigrations(database.engine)
  return database.withMigrationLock(async (db) => {
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER NOT NULL PRIMARY KEY,
      name VARCHAR(255) NOT NULL,
      applied_at VARCHAR(32) NOT NULL
    )`.execute(db)
    const applied = new Set(
      (await sql<{ version: number }>`SELECT version FROM schema_migrations`.execute(db)).rows.map((row) =>
        Number(row.version),
      ),
    )
    const done: string[] = []
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue
      const apply = async (conn: Kysely<Tables>) => {
        for (const statement of migration.statements) await sql.raw(statement).execute(conn)
        const appliedAt = new Date(clock.now()).toISOString()
        await sql`INSERT INTO schema_migrations (version, name, applied_at)
          VALUES (${migration.version}, ${migration.name}, ${appliedAt})`.execute(conn)
      }
      if (database.transactionalMigrations) await inTransaction(db, apply)
      else await apply(db)
      done.push(migration.name)
    }
    return done
  }, clock)
}

/** BEGIN/COMMIT on the locked connection itself, so the lock and the transaction share one session. */
async function inTransaction(db: Kysely<Tables>, work: (db: Kysely<Tables>) => Promise<void>): Promise<void> {
  await sql`BEGIN`.execute(db)
  try {
    await work(db)
    await sql`COMMIT`.execute(db)
  } catch (error) {
    await sql`ROLLBACK`.execute(db)
    throw error
  }
}
