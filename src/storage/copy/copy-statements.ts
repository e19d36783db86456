import type { TableMetadata } from 'kysely'
import { legacySession } from '../redis/session-record.js'
import {
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
  SINGLE_SLOT,
  sessionValues,
  toSession,
} from '../sql/session-rows.js'
import type { SqlEngine } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import { USER_COLUMNS } from '../sql/user-rows.js'
import type { StoredSession } from '../stores.js'

/**
 * An account as the copy moves it: the `users` row, column for column (password_hash '' stays ''). Its avatar and
 * provider links are rows of their own tables (copy-account-parts.ts).
 */
export interface AccountRow {
  id: string
  email: string
  passwordHash: string
  emailVerified: boolean
  createdAt: string
  username: string | null
  nickname: string | null
  bio: string | null
  role: string
  status: string
  updatedAt: string
}

/**
 * What a store of an earlier version (only read: never migrated by a copy) holds in place of each column of `users`
 * it lacks, as its migration would fill it in: before 0005 every account is unverified; before 0006 it has no
 * profile, is a `user`, active, and was last changed when it was made.
 */
const LEGACY_ACCOUNT_VALUES: Readonly<Record<string, string>> = {
  email_verified: '0',
  username: 'NULL',
  nickname: 'NULL',
  bio: 'NULL',
  role: "'user'",
  status: "'active'",
  updated_at: 'created_at',
}

/** The columns of `users` a copy reads (USER_COLUMNS), as a source's table has them (`tables`: its schema). */
export function accountColumnsOf(tables: readonly TableMetadata[]): string {
  const present = new Set(
    tables.find((table) => table.name === 'users')?.columns.map((column) => column.name),
  )
  return USER_COLUMNS.split(', ')
    .map((column) => {
      const legacy = LEGACY_ACCOUNT_VALUES[column]
      return present.has(column) || legacy === undefined ? column : `${legacy} AS ${column}`
    })
    .join(', ')
}

/**
 * What a store of an earlier version holds in place of each column of `sessions` it lacks, as its migration fills it
 * in: before 0010 no session was established with a second factor.
 */
const LEGACY_SESSION_VALUES: Readonly<Record<string, string>> = {
  second_factor: '0',
}

/** The columns of `sessions` a copy reads (SESSION_COLUMNS), as a source's table has them (`tables`: its schema). */
export function sessionColumnsOf(tables: readonly TableMetadata[]): string {
  const present = new Set(
    tables.find((table) => table.name === 'sessions')?.columns.map((column) => column.name),
  )
  return SESSION_COLUMNS.split(', ')
    .map((column) => {
      const legacy = LEGACY_SESSION_VALUES[column]
      return present.has(column) || legacy === undefined ? column : `${legacy} AS ${column}`
    })
    .join(', ')
}

/**
 * A session as the copy moves it: every field, and its slot in a SQL store (migration 0004), which a SQL target
 * keeps; null from Redis, which has none, and a SQL target then gives the session its own id as its slot (the next
 * start with the `single` limit ends it like any other session).
 */
export interface SessionRow extends StoredSession {
  slot: string | null
}

/** Accounts per batch at most (--batch-size); each batch's accounts are inserted ACCOUNTS_PER_INSERT at a time. */
export const MAX_BATCH_SIZE = 5_000

/** Accounts per insert at most: 11 columns × 2,000 rows stays under SQLite's 32,766 bound parameters. */
export const ACCOUNTS_PER_INSERT = 2_000

/**
 * Sessions per insert at most: a batch's accounts may have several each, and 12 columns × 2,000 rows stays under
 * SQLite's 32,766 bound parameters.
 */
export const SESSIONS_PER_INSERT = 2_000

/**
 * The PostgreSQL types of SESSION_INSERT_COLUMNS, in order (migrations/postgres/0004_sessions.sql, 0010); the flag's
 * values are 1 or 0 (sessionValues), which PostgreSQL reads as booleans.
 */
const SESSION_COLUMN_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'bigint',
  'bigint',
  'bigint',
  'text',
  'text',
  'text',
  'bigint',
  'boolean',
] as const

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
 * A multi-row INSERT of `rows` rows of `width` values into `columns` that leaves a row already there (by any unique
 * key) as it is: what a resumed or forced copy writes, and its verification then compares.
 */
export function insertLeavingExisting(
  engine: SqlEngine,
  table: string,
  columns: string,
  rows: number,
  width: number,
): string {
  const values = valuesList(engine, rows, width)
  if (engine === 'mysql') return `INSERT IGNORE INTO ${table} (${columns}) VALUES ${values}`
  return `INSERT INTO ${table} (${columns}) VALUES ${values} ON CONFLICT DO NOTHING`
}

/**
 * The statements of `tessera store copy`, in one engine's SQL: reads by keyset on the id (user ids are 10 digits, so
 * every engine orders them alike) and multi-row inserts that leave a row already there as it is (a resumed or forced
 * copy), which verification then compares.
 */
export function copyStatements(
  engine: SqlEngine,
  accountColumns = USER_COLUMNS,
  sessionColumns = SESSION_COLUMNS,
) {
  const placeholder = placeholderFor(engine)
  const insert = (table: string, columns: string, rows: number, width: number) =>
    insertLeavingExisting(engine, table, columns, rows, width)

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
        sql: `SELECT ${accountColumns} FROM users WHERE id > ${placeholder(1)}
          ORDER BY id LIMIT ${Math.trunc(limit)}`,
        parameters: [afterId],
      }
    },
    /** The accounts with an id from `first` to `last`, in id order. */
    accountsBetween(first: string, last: string): SqlQuery {
      return {
        sql: `SELECT ${accountColumns} FROM users
          WHERE id >= ${placeholder(1)} AND id <= ${placeholder(2)} ORDER BY id`,
        parameters: [first, last],
      }
    },
    /** The sessions of the accounts from `first` to `last` that expire after `now` (SESSION_COLUMNS and slot). */
    sessionsBetween(first: string, last: string, now: number): SqlQuery {
      return {
        sql: `SELECT ${sessionColumns}, slot FROM sessions
          WHERE user_id >= ${placeholder(1)} AND user_id <= ${placeholder(2)} AND expires_at > ${placeholder(3)}`,
        parameters: [first, last, now],
      }
    },
    /**
     * The refresh tokens of a store of a version before migration 0004 (only read: never migrated by a copy), one
     * per account, of the accounts from `first` to `last` that expire after `now`.
     */
    legacyTokensBetween(first: string, last: string, now: number): SqlQuery {
      return {
        sql: `SELECT user_id, token_digest, expires_at FROM refresh_tokens
          WHERE user_id >= ${placeholder(1)} AND user_id <= ${placeholder(2)} AND expires_at > ${placeholder(3)}`,
        parameters: [first, last, now],
      }
    },
    countAccountsAfter(afterId: string): SqlQuery {
      return { sql: `SELECT COUNT(*) AS n FROM users WHERE id > ${placeholder(1)}`, parameters: [afterId] }
    },
    lastAccountId: { sql: 'SELECT MAX(id) AS id FROM users', parameters: [] } satisfies SqlQuery,
    anyAccount: { sql: 'SELECT id FROM users LIMIT 1', parameters: [] } satisfies SqlQuery,
    /**
     * At most ACCOUNTS_PER_INSERT accounts, in one multi-row insert of USER_COLUMNS; the flag a boolean for
     * PostgreSQL, 1 or 0 for the others.
     */
    insertAccounts(rows: readonly AccountRow[]): SqlQuery {
      const flag = (verified: boolean) => (engine === 'postgres' ? verified : verified ? 1 : 0)
      return {
        sql: insert('users', USER_COLUMNS, rows.length, USER_COLUMNS.split(', ').length),
        parameters: rows.flatMap((row) => [
          row.id,
          row.email,
          row.passwordHash,
          flag(row.emailVerified),
          row.createdAt,
          row.username,
          row.nickname,
          row.bio,
          row.role,
          row.status,
          row.updatedAt,
        ]),
      }
    },
    /**
     * At most SESSIONS_PER_INSERT sessions. PostgreSQL gets them as one array per column (`unnest`), as the audit
     * store appends its events: one statement text and twelve parameters, and a third less of the server's time
     * than a multi-row VALUES of twelve parameters a row (measured inserting 100,000 sessions, with eleven).
     */
    insertSessions(rows: readonly SessionRow[]): SqlQuery {
      const values = rows.map((row) => sessionValues(row, row.slot ?? row.id))
      if (engine === 'postgres') {
        return {
          sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS})
            SELECT * FROM unnest(${SESSION_COLUMN_TYPES.map((type, index) => `$${index + 1}::${type}[]`).join(', ')})
            ON CONFLICT DO NOTHING`,
          parameters: SESSION_COLUMN_TYPES.map((_, column) => values.map((row) => row[column])),
        }
      }
      return {
        sql: insert('sessions', SESSION_INSERT_COLUMNS, rows.length, SESSION_COLUMN_TYPES.length),
        parameters: values.flat(),
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
    // PostgreSQL returns a boolean, the others 0 or 1
    emailVerified: row.email_verified === true || Number(row.email_verified) === 1,
    createdAt: String(row.created_at),
    username: textOrNull(row.username),
    nickname: textOrNull(row.nickname),
    bio: textOrNull(row.bio),
    role: String(row.role),
    status: String(row.status),
    updatedAt: String(row.updated_at),
  }
}

const textOrNull = (value: unknown) => (value === null || value === undefined ? null : String(value))

/** A row of sessionsBetween as a driver returns it. */
export function toSessionRow(row: Record<string, unknown>): SessionRow {
  return { ...toSession(row), slot: String(row.slot) }
}

/**
 * A row of legacyTokensBetween as the session migration 0004 makes of it: of slot 'single', under the id that a
 * legacy Redis key gets (session-record.ts), so that the source reads alike each time; started `now`.
 */
export function legacyTokenToSessionRow(row: Record<string, unknown>, now: number): SessionRow | null {
  const session = legacySession(String(row.user_id), `${row.token_digest}:${Number(row.expires_at)}`, now)
  return session === null ? null : { ...session, slot: SINGLE_SLOT }
}
