import { AUDIT_COLUMNS, auditPageText, auditRowValues, auditValuesList } from './audit-rows.js'
import { questionMarkAccountStatements } from './question-mark-account-statements.js'
import { questionMarkFactorStatements } from './question-mark-factor-statements.js'
import { questionMarkMailStatements } from './question-mark-mail-statements.js'
import { SESSION_COLUMNS, SESSION_ORDER, SINGLE_SLOT } from './session-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements that SQLite and MySQL/MariaDB write alike, with `?` placeholders: all but the upserts, the
 * rotation of a session (questionMarkSessionRotation), the statements bounded by a LIMIT, the outbox's claim, renewal
 * and release, the reads of an account (their aggregate of its providers: questionMarkUserReads) and the unlink of a
 * provider, which each engine spells its own way
 * (sqlite/statements.ts, mysql/statements.ts). PostgreSQL numbers its placeholders and has its own file. A flag is
 * 1 or 0: SQLite has no boolean, and MySQL's BOOLEAN is a TINYINT.
 */
export const questionMarkStatements: Omit<
  SqlStatements,
  | 'startSession'
  | 'evictSessions'
  | 'rotateSession'
  | 'pruneAuditEvents'
  | 'pruneEmailCodes'
  | 'claimOutbox'
  | 'claimedOutbox'
  | 'renewOutbox'
  | 'heldOutbox'
  | 'releaseOutbox'
  | 'incrementRateCounter'
  | 'pruneRateCounters'
  | 'findUsersByIds'
  | 'findUserByEmail'
  | 'listUsers'
  | 'searchUsers'
  | 'countActiveUsers'
  | 'setUserRoleKeeping'
  | 'setUserStatusKeeping'
  | 'deleteUserKeeping'
  | 'enqueueOutboxIfUserKeeping'
  | 'putAvatar'
  | 'unlinkProvider'
  | 'pruneTickets'
  | 'lockAccount'
  | 'prunePendingFactors'
  | 'insertRecoveryCodes'
  | 'insertServiceKeyIfAbsent'
  | 'replaceServiceKey'
> = {
  ...questionMarkMailStatements,
  ...questionMarkAccountStatements,
  ...questionMarkFactorStatements,
  ...questionMarkAuditPage(),
  updatePasswordHash: (id, passwordHash) => ({
    sql: 'UPDATE users SET password_hash = ? WHERE id = ?',
    parameters: [passwordHash, id],
  }),
  claimAddress: (id) => ({
    sql: "UPDATE users SET email_verified = 1, password_hash = '' WHERE id = ? AND email_verified = 0",
    parameters: [id],
  }),
  markEmailVerified: (id) => ({
    sql: 'UPDATE users SET email_verified = 1 WHERE id = ?',
    parameters: [id],
  }),
  changeEmail: (id, email) => ({
    sql: 'UPDATE users SET email = ?, email_verified = 1 WHERE id = ?',
    parameters: [email, id],
  }),
  deleteUser: (id) => ({
    sql: 'DELETE FROM users WHERE id = ?',
    parameters: [id],
  }),
  countSessions: (userId) => ({
    sql: 'SELECT COUNT(*) AS sessions, MIN(expires_at) AS soonest FROM sessions WHERE user_id = ?',
    parameters: [userId],
  }),
  findSessionBesideSingle: (userId) => ({
    sql: `SELECT id FROM sessions WHERE user_id = ? AND slot <> '${SINGLE_SLOT}' LIMIT 1`,
    parameters: [userId],
  }),
  endSessionsBesideSingle: (userId) => ({
    sql: `DELETE FROM sessions WHERE user_id = ? AND slot <> '${SINGLE_SLOT}'`,
    parameters: [userId],
  }),
  findSessionById: (userId, id, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND id = ? AND expires_at > ?`,
    parameters: [userId, id, now],
  }),
  findSessionByDigest: (userId, digest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND token_digest = ? AND expires_at > ?`,
    parameters: [userId, digest, now],
  }),
  findSessionByPreviousDigest: (userId, previousDigest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND previous_digest = ? AND expires_at > ?`,
    parameters: [userId, previousDigest, now],
  }),
  listSessions: (userId, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND expires_at > ?
      ORDER BY ${SESSION_ORDER}`,
    parameters: [userId, now],
  }),
  markSessionSecondFactor: (userId, id, now) => ({
    sql: 'UPDATE sessions SET second_factor = 1 WHERE user_id = ? AND id = ? AND expires_at > ?',
    parameters: [userId, id, now],
  }),
  endSession: (userId, id, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = ? AND id = ? AND expires_at > ?',
    parameters: [userId, id, now],
  }),
  endSessions: (userId, except, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = ? AND id <> ? AND expires_at > ?',
    parameters: [userId, except, now],
  }),
  endSessionsReturningIds: (userId, except, now) => [
    {
      sql: 'DELETE FROM sessions WHERE user_id = ? AND id <> ? AND expires_at > ? RETURNING id',
      parameters: [userId, except, now],
    },
  ],
  deleteSessions: (userId) => ({
    sql: 'DELETE FROM sessions WHERE user_id = ?',
    parameters: [userId],
  }),
  appendAuditEvents: (events) => ({
    sql: `INSERT INTO audit_events (${AUDIT_COLUMNS}) VALUES ${auditValuesList(events.length)}`,
    parameters: auditRowValues(events),
  }),
  listAuditEvents: (userId, since, limit) => ({
    sql: `SELECT ${AUDIT_COLUMNS} FROM (
        SELECT id, ${AUDIT_COLUMNS} FROM audit_events WHERE user_id = ? AND occurred_at >= ?
        ORDER BY occurred_at DESC, id DESC LIMIT ?
      ) AS latest ORDER BY occurred_at, id`,
    parameters: [userId, since, limit],
  }),
  eraseAuditClientAddresses: (userId) => ({
    sql: 'UPDATE audit_events SET client_address = NULL WHERE user_id = ? AND client_address IS NOT NULL',
    parameters: [userId],
  }),
}

/**
 * A page of the audit trail (SqlStatements.pageAuditEvents) with `?` placeholders, the same text on every engine
 * (PostgreSQL numbers them): one text per filter, four in all.
 */
export function questionMarkAuditPage(): Pick<SqlStatements, 'pageAuditEvents'> {
  return {
    pageAuditEvents: ({ userId, kind }, since, position, limit) => ({
      sql: auditPageText({ user: userId !== undefined, kind: kind !== undefined }),
      parameters: [
        ...(userId === undefined ? [] : [userId]),
        ...(kind === undefined ? [] : [kind]),
        since,
        position.at,
        position.at,
        position.id,
        limit,
      ],
    }),
  }
}

/**
 * The rotation of a session (SqlStatements.rotateSession) in the SQL of SQLite and MySQL/MariaDB, which differ only in
 * the function of the lesser of two values: `least` is SQLite's two-argument MIN or MySQL's LEAST.
 */
export function questionMarkSessionRotation(least: 'MIN' | 'LEAST'): Pick<SqlStatements, 'rotateSession'> {
  return {
    // the previous digest is the parameter, not the column: MySQL assigns left to right, so `previous_digest =
    // token_digest` after `token_digest = ?` would read the new value. With a lifetime, the expiry is capped by the
    // row's own created_at, which no assignment changes, and a session that started at or before now - lifetime
    // matches nothing: the same single UPDATE, no read before it
    rotateSession: (userId, currentDigest, next, now) =>
      next.lifetimeMs === null
        ? {
            sql: `UPDATE sessions SET token_digest = ?, expires_at = ?, previous_digest = ?, rotated_at = ?,
        last_used_at = ?, client_address = ?
      WHERE user_id = ? AND token_digest = ? AND expires_at > ?`,
            parameters: [
              next.digest,
              next.expiresAt,
              currentDigest,
              now,
              now,
              next.clientAddress,
              userId,
              currentDigest,
              now,
            ],
          }
        : {
            sql: `UPDATE sessions SET token_digest = ?, expires_at = ${least}(?, created_at + ?), previous_digest = ?,
        rotated_at = ?, last_used_at = ?, client_address = ?
      WHERE user_id = ? AND token_digest = ? AND expires_at > ? AND created_at > ?`,
            parameters: [
              next.digest,
              next.expiresAt,
              next.lifetimeMs,
              currentDigest,
              now,
              now,
              next.clientAddress,
              userId,
              currentDigest,
              now,
              now - next.lifetimeMs,
            ],
          },
  }
}
