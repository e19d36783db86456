import type { SecurityEvent } from '../../security-event.js'
import type { StoredRefreshToken, UserRecord } from '../stores.js'

/** One statement: its text, and its values in the order of the text's placeholders. */
export interface SqlQuery {
  sql: string
  parameters: readonly unknown[]
}

/**
 * The statements of the SQL stores, written out in each engine's SQL (`statements.ts` in sqlite/, postgres/,
 * mysql/). Each text is fixed, so a call builds only the list of its values, and SQLite prepares each text once
 * for the life of its connection.
 */
export interface SqlStatements {
  /** The account's row (id, email, password_hash, created_at), or none. */
  findUserById(id: string): SqlQuery
  /** The account's row (id, email, password_hash, created_at), or none. */
  findUserByEmail(email: string): SqlQuery
  /** Inserts the account; fails with a unique violation when its id or e-mail is taken. */
  insertUser(user: UserRecord): SqlQuery
  updatePasswordHash(id: string, passwordHash: string): SqlQuery
  /** At most `limit` account rows (as findUserById's) with an id greater than `after`, in id order. */
  listUsers(after: string, limit: number): SqlQuery
  /** Deletes the account; its refresh token goes with it (ON DELETE CASCADE). */
  deleteUser(id: string): SqlQuery
  /** Inserts the user's refresh token, or replaces the one the user has (one row per user). */
  putRefreshToken(userId: string, token: StoredRefreshToken): SqlQuery
  /**
   * Replaces the user's token with `next` only if the current one has `currentDigest` and expires after `now`:
   * one conditional UPDATE that changes one row or none. The engine's row lock serializes concurrent rotations; the
   * loser re-reads the new digest, matches nothing and changes no row.
   */
  rotateRefreshToken(userId: string, currentDigest: string, next: StoredRefreshToken, now: number): SqlQuery
  deleteRefreshToken(userId: string): SqlQuery
  /** The user's token's `expires_at` if it expires after `now`, or no row. */
  refreshTokenExpiry(userId: string, now: number): SqlQuery
  /**
   * Inserts the events, one row each, in one multi-row INSERT: its text depends on the number of rows only, so
   * SQLite keeps at most MAX_AUDIT_ROWS texts of it (see audit-rows.ts).
   */
  appendAuditEvents(events: readonly SecurityEvent[]): SqlQuery
  /** The latest `limit` of the user's events at or after `since`, oldest first (AUDIT_COLUMNS of each). */
  listAuditEvents(userId: string, since: number, limit: number): SqlQuery
  /** Deletes at most `batch` of the oldest events before `before`. */
  pruneAuditEvents(before: number, batch: number): SqlQuery
  /** Sets the client address of the user's events to null where it is not already. */
  eraseAuditClientAddresses(userId: string): SqlQuery
}
