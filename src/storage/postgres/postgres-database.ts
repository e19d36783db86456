import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { withSessionLock } from '../sql/migration-lock.js'
import {
  runPooled,
  type SqlDatabase,
  type WriteConnection,
  writeAllInTransaction,
  writeInTransaction,
} from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { postgresStatements } from './statements.js'

export interface PostgresOptions {
  maxConnections: number
  /** Bound on connecting, waiting for a pooled connection and each statement. */
  timeoutMs: number
  /** Told about errors of idle pooled connections (the server went away); the pool replaces them. */
  onIdleError: (error: Error) => void
}

/** Arbitrary, fixed key of the advisory lock that serializes migrations across instances. */
const MIGRATION_LOCK_KEY = 4_821_039_576

/** PostgreSQL through a pg pool of DATABASE_MAX_CONNECTIONS connections. */
export function openPostgresDatabase(url: string, options: PostgresOptions): SqlDatabase {
  // docs/api.md R7.2: the server gives up on a statement, a lock wait or an abandoned transaction before the
  // service gives up on it, so what the service reports as failed is a failure on the server too
  const serverTimeoutMs = Math.max(1, Math.floor(options.timeoutMs * 0.8))
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections,
    // no wait for a pooled connection outlives the request that waits
    connectionTimeoutMillis: options.timeoutMs,
    query_timeout: options.timeoutMs,
    statement_timeout: serverTimeoutMs,
    lock_timeout: serverTimeoutMs,
    idle_in_transaction_session_timeout: options.timeoutMs,
    keepAlive: true,
  })
  pool.on('error', options.onIdleError)
  // pg emits 'error' on a client whose connection dies; the pool listens only while the client is idle, so one that
  // is checked out at that moment would crash the process. Its query fails with the same error, which is handled.
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) })
  const location = new URL(url)
  const acquire = async (): Promise<WriteConnection> => {
    const client = await pool.connect()
    return {
      query: async (text, parameters) => {
        const result = await client.query(text, [...parameters])
        return { rows: result.rows, changes: result.rowCount ?? 0 }
      },
      release: () => client.release(),
      destroy: () => client.release(true),
    }
  }

  return {
    engine: 'postgres',
    statements: postgresStatements,
    db,
    synchronous: false,
    run: (text, parameters) => runPooled(db, text, parameters),
    write: (text, parameters, attempt) => writeInTransaction(acquire, text, parameters, attempt),
    writeAll: (queries, attempt) => writeAllInTransaction(acquire, queries, attempt),
    isUniqueViolation: (error) => (error as { code?: unknown } | null)?.code === '23505',
    withMigrationLock: (fn, clock) =>
      withSessionLock(
        db,
        {
          tryLock: async (connection) => {
            const { rows } = await sql<{
              locked: boolean
            }>`SELECT pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) AS locked`.execute(connection)
            return rows[0]?.locked === true
          },
          unlock: (connection) => sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection),
        },
        fn,
        clock,
      ),
    transactionalMigrations: true,
    description: `postgres ${location.host}${location.pathname}`,
    close: () => db.destroy(),
  }
}
