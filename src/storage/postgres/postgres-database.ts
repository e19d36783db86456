import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { withSessionLock } from '../sql/migration-lock.js'
import {
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

/**
 * At most this many statement texts get a name (below), each of at most NAMED_PARAMETERS parameters: the stores'
 * statements are a fixed set, but a few are built for their number of rows (the audit trail's batches, up to 200
 * rows of a dozen values), and a prepared statement costs memory on each pooled connection of the server. A
 * statement of many rows gains little from being prepared: its rows cost more than its planning.
 */
const NAMED_STATEMENTS = 200
const NAMED_PARAMETERS = 64

/**
 * Names for the texts of the statements with parameters, so that each pooled connection has the server parse and
 * plan each one once (a prepared statement, kept for the life of the connection) instead of at every call: a
 * primary-key read answered 1.13 to 1.35 times as many calls per second so (16 at a time, 4 alternated rounds).
 * Every statement lists its columns, so a migration that adds one changes no prepared statement's result.
 */
function statementNames(): (text: string) => string | undefined {
  const names = new Map<string, string>()
  return (text) => {
    let name = names.get(text)
    if (name === undefined && names.size < NAMED_STATEMENTS) {
      name = `tessera_${names.size + 1}`
      names.set(text, name)
    }
    return name
  }
}

/** The commands whose row count is of rows changed. */
const WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

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
  const nameOf = statementNames()
  /** A statement with parameters by its name; BEGIN, COMMIT and the like as they are (one round trip). */
  const statement = (text: string, parameters: readonly unknown[]): pg.QueryConfig => {
    const name = parameters.length === 0 || parameters.length > NAMED_PARAMETERS ? undefined : nameOf(text)
    return name === undefined ? { text, values: [...parameters] } : { name, text, values: [...parameters] }
  }
  const acquire = async (): Promise<WriteConnection> => {
    const client = await pool.connect()
    return {
      query: async (text, parameters) => {
        const result = await client.query(statement(text, parameters))
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
    // the pool's own query (a connection, the statement, the connection back), not Kysely's: the stores' statements
    // are text already, and Kysely's driver would add its connection wrapper and result copy to every read
    run: async (text, parameters) => {
      const result = await pool.query(statement(text, parameters))
      // as Kysely counted them: the rows a write changed, none for a read
      return { rows: result.rows, changes: WRITES.has(result.command) ? (result.rowCount ?? 0) : 0 }
    },
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
