import type { SqlEngine } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'

/** An account as the copy moves it: the `users` row, column for column. */
export interface AccountRow {
  id: string
  email: string
  passwordHash: string
  createdAt: string
}

/** A stored refresh token (its digest and expiry in epoch milliseconds), as the copy moves it. */
export interface TokenRow {
  userId: string
  digest: string
  expiresAt: number
}

/** Rows per batch at most: 4 columns × 5,000 rows stays under SQLite's 32,766 bound parameters. */
export const MAX_BATCH_SIZE = 5_000

/** A read of the copy: the rows `query` returns, as the driver gives them. */
export type Read = (query: SqlQuery) => Promise<Record<string, unknown>[]>

/** The `index`-th (from 1) placeholder of a statement in `engine`'s SQL: `$1` for PostgreSQL, `?` elsewhere. */
export const placeholderFor =
  (engine: SqlEngine) =>
  (index: number): string =>
    engine === 'postgres' ? `$${index}` : '?'

/** The VALUES of a multi-row INSERT of `rows` rows of `columns` columns: `($1, $2), ($3, $4)` or `(?, ?), (?, ?)`. */
export function valuesList(engine: SqlEngine, rows: number, columns: number): string {
  const placeholder = placeholderFor(engine)
  return Array.from(
    { length: rows },
    (_, row) =>
      `(${Array.from({ length: columns }, (__, column) => placeholder(row * columns + column + 1)).join(', ')})`,
  ).join(', ')
}

/**
 * The statements of `tessera store copy`, in one engine's SQL: reads by keyset on the id (user ids are 10 digits, so
 * every engine orders them alike) and multi-row inserts that leave a row already there as it is (a resumed or forced
 * copy), which verification then compares.
 */
export function copyStatements(engine: SqlEngine) {
  const placeholder = placeholderFor(engine)
  const insert = (table: string, columns: string, rows: number, width: number) => {
    const values = valuesList(engine, rows, width)
    if (engine === 'mysql') return `INSERT IGNORE INTO ${table} (${columns}) VALUES ${values}`
    return `INSERT INTO ${table} (${columns}) VALUES ${values} ON CONFLICT DO NOTHING`
  }

  return {
    /** Opens a read transaction whose reads all see the database as it was when it began. */
    beginSnapshot(): string[] {
      if (engine === 'postgres') {
        // the pool closes a session idle in a transaction for longer than a storage call; the copy's snapshot
        // stays open while it writes to the target
        return [
          'SET idle_in_transaction_session_timeout = 0',
          'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
        ]
      }
      if (engine === 'mysql') {
        return [
          'SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ',
          'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
        ]
      }
      // a deferred transaction takes its snapshot at its first read and keeps it (WAL)
      return ['BEGIN']
    },
    endSnapshot: 'ROLLBACK',
    /** Up to `limit` accounts with an id after `afterId` ('' for the first), in id order. */
    accountsAfter(afterId: string, limit: number): SqlQuery {
      return {
        sql: `SELECT id, email, password_hash, created_at FROM users WHERE id > ${placeholder(1)}
          ORDER BY id LIMIT ${Math.trunc(limit)}`,
        parameters: [afterId],
      }
    },
    /** The accounts with an id from `first` to `last`, in id order. */
    accountsBetween(first: string, last: string): SqlQuery {
      return {
        sql: `SELECT id, email, password_hash, created_at FROM users
          WHERE id >= ${placeholder(1)} AND id <= ${placeholder(2)} ORDER BY id`,
        parameters: [first, last],
      }
    },
    /** The refresh tokens of the accounts from `first` to `last` that expire after `now`, in user id order. */
    tokensBetween(first: string, last: string, now: number): SqlQuery {
      return {
        sql: `SELECT user_id, token_digest, expires_at FROM refresh_tokens
          WHERE user_id >= ${placeholder(1)} AND user_id <= ${placeholder(2)} AND expires_at > ${placeholder(3)}
          ORDER BY user_id`,
        parameters: [first, last, now],
      }
    },
    countAccountsAfter(afterId: string): SqlQuery {
      return { sql: `SELECT COUNT(*) AS n FROM users WHERE id > ${placeholder(1)}`, parameters: [afterId] }
    },
    lastAccountId: { sql: 'SELECT MAX(id) AS id FROM users', parameters: [] } satisfies SqlQuery,
    anyAccount: { sql: 'SELECT id FROM users LIMIT 1', parameters: [] } satisfies SqlQuery,
    insertAccounts(rows: readonly AccountRow[]): SqlQuery {
      return {
        sql: insert('users', 'id, email, password_hash, created_at', rows.length, 4),
        parameters: rows.flatMap((row) => [row.id, row.email, row.passwordHash, row.createdAt]),
      }
    },
    insertTokens(rows: readonly TokenRow[]): SqlQuery {
      return {
        sql: insert('refresh_tokens', 'user_id, token_digest, expires_at', rows.length, 3),
        parameters: rows.flatMap((row) => [row.userId, row.digest, row.expiresAt]),
      }
    },
  }
}

export type CopyStatements = ReturnType<typeof copyStatements>

/** A `users` row as a driver returns it. */
export function toAccountRow(row: Record<string, unknown>): AccountRow {
  return {
    id: String(row.id),
    email: String(row.email),
    passwordHash: String(row.password_hash),
    createdAt: String(row.created_at),
  }
}

/** A `refresh_tokens` row as a driver returns it (PostgreSQL returns BIGINT as a string). */
export function toTokenRow(row: Record<string, unknown>): TokenRow {
  return { userId: String(row.user_id), digest: String(row.token_digest), expiresAt: Number(row.expires_at) }
}
