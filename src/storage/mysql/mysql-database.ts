import { Kysely, MysqlDialect, sql } from 'kysely'
import { createPool, type PoolConnection, type ResultSetHeader, type RowDataPacket } from 'mysql2'
import { withSessionLock } from '../sql/migration-lock.js'
import {
  runPooled,
  type SqlDatabase,
  type WriteConnection,
  writeAllInTransaction,
  writeInTransaction,
} from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { mysqlStatements } from './statements.js'

export interface MysqlOptions {
  maxConnections: number
  /** Bound on connecting and on lock waits. Statements are bounded by the stores' own timeout. */
  timeoutMs: number
}

const MIGRATION_LOCK_NAME = 'tessera_migrations'

/**
 * How many times a write is run again after InnoDB chose it as a deadlock's victim. Concurrent upserts of one row
 * through a secondary unique key (the starts of one user's session in single mode: migration 0004) wait for each
 * other's locks in an order InnoDB cannot always grant; it then rolls one transaction back and says to restart it.
 * Each write is a transaction of its own (one statement, or the few of writeAll), so running it again is that
 * restart, with nothing of the first run left; each round lets at least one of the writes through.
 */
const DEADLOCK_RETRIES = 10

/** MySQL 8 or MariaDB 10.11 through a mysql2 pool of DATABASE_MAX_CONNECTIONS connections. */
export function openMysqlDatabase(url: string, options: MysqlOptions): SqlDatabase {
  const location = new URL(url)
  // mariadb:// is accepted as a synonym; mysql2 wants mysql://
  const uri = location.protocol === 'mariadb:' ? `mysql:${url.slice('mariadb:'.length)}` : url
  const pool = createPool({
    uri,
    connectionLimit: options.maxConnections,
    connectTimeout: options.timeoutMs,
    waitForConnections: true,
    enableKeepAlive: true,
    timezone: 'Z',
    charset: 'utf8mb4',
  })
  // mysql2 listens for a pooled connection's first error only; a second (a write to the dead socket) must not crash
  // the process. The query that was running fails with the error, which is handled.
  // docs/api.md R7.2: a statement, and a write waiting for a row lock, give up on the server before the service gives
  // up on them. MariaDB's max_statement_time has no MySQL equivalent for writes (max_execution_time bounds SELECTs
  // only): on MySQL that SET fails and is ignored.
  const lockWaitSeconds = Math.max(1, Math.floor(options.timeoutMs / 1000))
  const statementSeconds = Math.max(0.001, (options.timeoutMs * 0.8) / 1000).toFixed(3)
  pool.on('connection', (connection) => {
    connection.on('error', () => {})
    connection.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitSeconds}`, () => {})
    connection.query(`SET SESSION max_statement_time = ${statementSeconds}`, () => {})
  })
  const db = new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) })
  // mysql2's pool has no bound on the wait for a connection: writeInTransaction sends nothing on a connection that
  // comes after its caller stopped waiting
  const acquire = () =>
    new Promise<WriteConnection>((resolve, reject) => {
      pool.getConnection((error, connection: PoolConnection) => {
        if (error) reject(error)
        else resolve(writeConnection(connection))
      })
    })

  return {
    engine: 'mysql',
    statements: mysqlStatements,
    db,
    synchronous: false,
    run: (text, parameters) => runPooled(db, text, parameters),
    write: (text, parameters, attempt) =>
      runAgainAfterDeadlock(() => writeInTransaction(acquire, text, parameters, attempt)),
    writeAll: (queries, attempt) =>
      runAgainAfterDeadlock(() => writeAllInTransaction(acquire, queries, attempt)),
    isUniqueViolation: (error) => (error as { code?: unknown } | null)?.code === 'ER_DUP_ENTRY',
    withMigrationLock: (fn, clock) =>
      withSessionLock(
        db,
        {
          tryLock: async (connection) => {
            const { rows } = await sql<{
              locked: number | null
            }>`SELECT GET_LOCK(${MIGRATION_LOCK_NAME}, 0) AS locked`.execute(connection)
            return Number(rows[0]?.locked) === 1
          },
          unlock: (connection) => sql`SELECT RELEASE_LOCK(${MIGRATION_LOCK_NAME})`.execute(connection),
        },
        fn,
        clock,
      ),
    // MySQL commits DDL implicitly; the lock alone keeps instances from applying a migration twice
    transactionalMigrations: false,
    description: `mysql ${location.host}${location.pathname}`,
    close: () => db.destroy(),
  }
}

/** Runs `write` (a transaction of its own) again while InnoDB rolls it back as a deadlock's victim: DEADLOCK_RETRIES. */
async function runAgainAfterDeadlock<T>(write: () => Promise<T>): Promise<T> {
  for (let retried = 0; ; retried++) {
    try {
      return await write()
    } catch (error) {
      const deadlock = (error as { code?: unknown } | null)?.code === 'ER_LOCK_DEADLOCK'
      if (!deadlock || retried === DEADLOCK_RETRIES) throw error
    }
  }
}

function writeConnection(connection: PoolConnection): WriteConnection {
  return {
    query: (text, parameters) =>
      new Promise((resolve, reject) => {
        connection.query<ResultSetHeader | RowDataPacket[]>(text, [...parameters], (error, result) => {
          if (error) reject(error)
          // a SELECT among the writes (a locking read, FOR UPDATE) answers with its rows
          else if (Array.isArray(result)) resolve({ rows: result, changes: 0 })
          // an insert id past 2^53 comes as a string
          else
            resolve({
              rows: [],
              changes: result.affectedRows ?? 0,
              lastInsertId: BigInt(result.insertId ?? 0),
            })
        })
      }),
    release: () => connection.release(),
    destroy: () => connection.destroy(),
  }
}
