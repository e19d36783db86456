import type { SecurityEvent } from '../../security-event.js'
import type { SessionRotation, StoredSession, UserRecord } from '../stores.js'

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
  /** Deletes the account; its sessions go with it (ON DELETE CASCADE). */
  deleteUser(id: string): SqlQuery
  /**
   * Stores the session in the user's slot `slot` (migration 0004): inserts it, or replaces, id included, the
   * session that holds the slot, in one upsert on (user_id, slot). A session's own id as its slot never meets
   * another; SINGLE_SLOT does, which is what makes concurrent starts with the `single` limit leave one session.
   * Fails on the foreign key when the account is gone.
   */
  startSession(session: StoredSession, slot: string): SqlQuery
  /**
   * How many sessions the user has stored, expired ones included (`sessions`), and the earliest expiry among them
   * (`soonest`, null without any): a read that tells a start with a numeric limit whether it has anything to end.
   */
  countSessions(userId: string): SqlQuery
  /** The id of one of the user's sessions in a slot other than SINGLE_SLOT, or no row. */
  findSessionBesideSingle(userId: string): SqlQuery
  /** Deletes the user's sessions in any slot but SINGLE_SLOT: what a start with the `single` limit ends. */
  endSessionsBesideSingle(userId: string): SqlQuery
  /**
   * Deletes the user's expired sessions and all but the `keep` most recently used of the others, in SESSION_ORDER.
   * One order for every start, which does not favour its own session: concurrent starts agree on which sessions to
   * keep, and the last of them to run, which sees every session the others stored, leaves exactly `keep`.
   */
  evictSessions(userId: string, keep: number, now: number): SqlQuery
  /**
   * In the user's session whose current digest is `currentDigest` and that expires after `now`, makes `next` the
   * current token, `currentDigest` the previous one and `now` its rotated_at and last_used_at: one conditional
   * UPDATE that changes one row or none. The engine's row lock serializes concurrent rotations; the loser re-reads
   * the new digest, matches nothing and changes no row.
   */
  rotateSession(userId: string, currentDigest: string, next: SessionRotation, now: number): SqlQuery
  /** The user's session (SESSION_COLUMNS) with this id, if it expires after `now`; else no row. */
  findSessionById(userId: string, id: string, now: number): SqlQuery
  /** The user's session whose current digest is `digest`, if it expires after `now`; else no row. */
  findSessionByDigest(userId: string, digest: string, now: number): SqlQuery
  /** The user's session whose previous digest is `previousDigest`, if it expires after `now`; else no row. */
  findSessionByPreviousDigest(userId: string, previousDigest: string, now: number): SqlQuery
  /** The user's sessions that expire after `now`, most recently used first (SESSION_ORDER). */
  listSessions(userId: string, now: number): SqlQuery
  /** Deletes the user's session `id` if it expires after `now`. */
  endSession(userId: string, id: string, now: number): SqlQuery
  /** Deletes the user's sessions that expire after `now` but the one with id `except` ('' for none). */
  endSessions(userId: string, except: string, now: number): SqlQuery
  /** Deletes every session of the user, expired ones too. */
  deleteSessions(userId: string): SqlQuery
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
