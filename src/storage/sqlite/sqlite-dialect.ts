import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Kysely, SqliteDialect, sql } from 'kysely'
import type { Database } from '../sql/schema.js'
import type { SqlDialect } from '../sql/sql-dialect.js'
import { loadBetterSqlite3 } from './better-sqlite3.js'
import { createSqliteExecutor } from './sqlite-executor.js'

/**
 * The embedded default: one SQLite file in WAL mode. `synchronous=FULL` makes every acknowledged write survive a
 * process kill and a power loss (DECISIONS: Storage); the busy timeout lets several processes share the file.
 * Writes are committed in groups (see createSqliteExecutor).
 */
export function createSqliteDialect(filename: string): SqlDialect {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
  const BetterSqlite3 = loadBetterSqlite3()
  const database = new BetterSqlite3(filename)
  database.pragma('journal_mode = WAL')
  database.pragma('synchronous = FULL')
  database.pragma('busy_timeout = 5000')
  database.pragma('foreign_keys = ON')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) })
  // the stores run their statements here, beside Kysely's own driver (which runs the migrations, before them)
  const executor = createSqliteExecutor(database)

  return {
    name: 'sqlite',
    db,
    synchronous: true,
    run: executor.run,
    write: executor.write,
    isUniqueViolation: (error) => {
      const code = (error as { code?: unknown } | null)?.code
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
    },
    withMigrationLock: (fn) =>
      db.connection().execute(async (connection) => {
        // IMMEDIATE takes the write lock at once: a second process waits (busy timeout) instead of racing
        await sql`BEGIN IMMEDIATE`.execute(connection)
        try {
          const result = await fn(connection)
          await sql`COMMIT`.execute(connection)
          return result
        } catch (error) {
          await sql`ROLLBACK`.execute(connection)
          throw error
        }
      }),
    transactionalMigrations: false,
    upsertSyntax: 'on-conflict',
    description: `sqlite ${filename}`,
  }
}
