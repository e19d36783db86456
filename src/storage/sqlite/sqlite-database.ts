import { closeSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Kysely, SqliteDialect, sql } from 'kysely'
import type { SqlDatabase } from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { applyPragmas } from './apply-pragmas.js'
import { loadBetterSqlite3 } from './better-sqlite3.js'
import { createSqliteExecutor } from './sqlite-executor.js'
import { createSqliteWriter } from './sqlite-writer.js'
import { sqliteStatements } from './statements.js'

/**
 * Every connection's settings: WAL, and `synchronous=FULL` so that every acknowledged write survives a process kill
 * and a power loss (docs/api.md §2.4); the busy timeout lets several processes share the file.
 */
const PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000', 'foreign_keys = ON']

/**
 * docs/api.md R5.5.4: the file holds the password hashes, so it is the owner's only. The directory is created 0700
 * and the file 0600 before SQLite opens it; SQLite creates `-wal` and `-shm` with the database file's mode. The
 * process umask is left alone (it can only take bits away). Files that already exist keep their mode.
 */
function createPrivately(filename: string): void {
  mkdirSync(dirname(filename), { recursive: true, mode: 0o700 })
  closeSync(openSync(filename, 'a', 0o600))
}

/**
 * Whether the existing file `filename` is a SQLite store the service made: migrations were applied to it. Read
 * without changing anything (read-only, no pragma), so that it is not turned into a WAL database.
 */
export function isExistingSqliteStore(filename: string): boolean {
  if (statSync(filename).size === 0) return false
  const BetterSqlite3 = loadBetterSqlite3()
  const connection = new BetterSqlite3(filename, { readonly: true, fileMustExist: true })
  try {
    return (
      connection
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        .get() !== undefined
    )
  } finally {
    connection.close()
  }
}

/** The migrations under way in this process, by file: the last one's turn, which the next one waits for. */
const migrationTurns = new Map<string, Promise<unknown>>()

/**
 * Runs `work` once every earlier migration of this process on the same file has ended. Across processes SQLite's
 * lock makes them wait; within one, a second `BEGIN IMMEDIATE` would wait in SQLite's busy handler, which blocks
 * the event loop the first one needs to finish, until the busy timeout fails it ("database is locked").
 */
function inTurn<T>(file: string | null, work: () => Promise<T>): Promise<T> {
  if (file === null) return work()
  const earlier = migrationTurns.get(file) ?? Promise.resolve()
  const turn = earlier.then(work, work)
  const settled = turn.then(
    () => {},
    () => {},
  )
  migrationTurns.set(file, settled)
  void settled.then(() => {
    if (migrationTurns.get(file) === settled) migrationTurns.delete(file)
  })
  return turn
}

/**
 * The embedded default: one SQLite file. Reads run on the event loop, on this connection; writes run on a thread
 * of their own with a second connection, committed in groups (see createSqliteWriter), so no fsync ever blocks the
 * event loop. An in-memory database cannot be shared with a thread, and needs no fsync: its writes run here too.
 */
export function openSqliteDatabase(filename: string): SqlDatabase {
  const inMemory = filename === ':memory:'
  if (!inMemory) createPrivately(filename)
  const BetterSqlite3 = loadBetterSqlite3()
  const connection = new BetterSqlite3(filename)
  applyPragmas(connection, PRAGMAS)
  // Kysely runs the migrations on this connection, before any store statement runs beside it
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: connection }) })
  const executor = createSqliteExecutor(connection)
  const writer = inMemory ? null : createSqliteWriter(filename, PRAGMAS)

  return {
    engine: 'sqlite',
    statements: sqliteStatements,
    db,
    synchronous: true,
    run: executor.run,
    write: writer?.write ?? executor.run,
    writeAll: writer?.writeAll ?? executor.runAll,
    async close() {
      await writer?.close()
      await db.destroy()
    },
    isUniqueViolation: (error) => {
      const code = (error as { code?: unknown } | null)?.code
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
    },
    withMigrationLock: (fn) =>
      inTurn(inMemory ? null : resolve(filename), () =>
        db.connection().execute(async (locked) => {
          // IMMEDIATE takes the write lock at once: a second process waits (busy timeout) instead of racing
          await sql`BEGIN IMMEDIATE`.execute(locked)
          try {
            const result = await fn(locked)
            await sql`COMMIT`.execute(locked)
            return result
          } catch (error) {
            await sql`ROLLBACK`.execute(locked)
            throw error
          }
        }),
      ),
    transactionalMigrations: false,
    description: `sqlite ${filename}`,
  }
}
