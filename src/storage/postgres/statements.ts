import { AUDIT_COLUMNS, auditColumnValues } from '../sql/audit-rows.js'
import {
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
  SESSION_ORDER,
  SESSION_UPSERT_SET,
  SINGLE_SLOT,
  sessionValues,
} from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/** The SQL stores' statements for PostgreSQL: `$n` placeholders (a value used twice bound once), INSERT … ON CONFLICT for the upsert. */
export const postgresStatements: SqlStatements = {
  findUserById: (id) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE id = $1',
    parameters: [id],
  }),
  findUserByEmail: (email) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE email = $1',
    parameters: [email],
  }),
  insertUser: (user) => ({
    sql: 'INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)',
    parameters: [user.id, user.email, user.passwordHash, user.createdAt],
  }),
  updatePasswordHash: (id, passwordHash) => ({
    sql: 'UPDATE users SET password_hash = $1 WHERE id = $2',
    parameters: [passwordHash, id],
  }),
  // ids are 10 digits without a leading 0, so their text order is their numeric order
  listUsers: (after, limit) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE id > $1 ORDER BY id LIMIT $2',
    parameters: [after, limit],
  }),
  deleteUser: (id) => ({
    sql: 'DELETE FROM users WHERE id = $1',
    parameters: [id],
  }),
  startSession: (session, slot) => ({
    sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
      ON CONFLICT (user_id, slot) DO UPDATE SET ${SESSION_UPSERT_SET}`,
    parameters: sessionValues(session, slot),
  }),
  countSessions: (userId) => ({
    sql: 'SELECT COUNT(*) AS sessions, MIN(expires_at) AS soonest FROM sessions WHERE user_id = $1',
    parameters: [userId],
  }),
  findSessionBesideSingle: (userId) => ({
    sql: `SELECT id FROM sessions WHERE user_id = $1 AND slot <> '${SINGLE_SLOT}' LIMIT 1`,
    parameters: [userId],
  }),
  endSessionsBesideSingle: (userId) => ({
    sql: `DELETE FROM sessions WHERE user_id = $1 AND slot <> '${SINGLE_SLOT}'`,
    parameters: [userId],
  }),
  evictSessions: (userId, keep, now) => ({
    sql: `DELETE FROM sessions WHERE user_id = $1 AND (expires_at <= $2 OR id IN (
      SELECT id FROM sessions WHERE user_id = $1 AND expires_at > $2 ORDER BY ${SESSION_ORDER} OFFSET $3))`,
    parameters: [userId, now, keep],
  }),
  rotateSession: (userId, currentDigest, next, now) => ({
    sql: `UPDATE sessions SET token_digest = $1, expires_at = $2, previous_digest = $3, rotated_at = $4,
        last_used_at = $4, client_address = $5
      WHERE user_id = $6 AND token_digest = $3 AND expires_at > $4`,
    parameters: [next.digest, next.expiresAt, currentDigest, now, next.clientAddress, userId],
  }),
  findSessionById: (userId, id, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND id = $2 AND expires_at > $3`,
    parameters: [userId, id, now],
  }),
  findSessionByDigest: (userId, digest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND token_digest = $2 AND expires_at > $3`,
    parameters: [userId, digest, now],
  }),
  findSessionByPreviousDigest: (userId, previousDigest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND previous_digest = $2 AND expires_at > $3`,
    parameters: [userId, previousDigest, now],
  }),
  listSessions: (userId, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND expires_at > $2
      ORDER BY ${SESSION_ORDER}`,
    parameters: [userId, now],
  }),
  endSession: (userId, id, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1 AND id = $2 AND expires_at > $3',
    parameters: [userId, id, now],
  }),
  endSessions: (userId, except, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1 AND id <> $2 AND expires_at > $3',
    parameters: [userId, except, now],
  }),
  deleteSessions: (userId) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1',
    parameters: [userId],
  }),
  // one text whatever the batch's size, seven array parameters: PostgreSQL parses no new statement per batch size
  // and binds seven values, not seven per row: a refresh's audit row costs the server 9 µs of CPU, against 18-20 µs as a
  // multi-row VALUES (docs/performance.md)
  appendAuditEvents: (events) => ({
    sql: `INSERT INTO audit_events (${AUDIT_COLUMNS})
      SELECT occurred_at, event, user_id, client_address, request_id, reason, omitted
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[])
        WITH ORDINALITY AS batch (occurred_at, event, user_id, client_address, request_id, reason, omitted, position)
      ORDER BY position`,
    parameters: auditColumnValues(events),
  }),
  listAuditEvents: (userId, since, limit) => ({
    sql: `SELECT ${AUDIT_COLUMNS} FROM (
        SELECT id, ${AUDIT_COLUMNS} FROM audit_events WHERE user_id = $1 AND occurred_at >= $2
        ORDER BY occurred_at DESC, id DESC LIMIT $3
      ) AS latest ORDER BY occurred_at, id`,
    parameters: [userId, since, limit],
  }),
  pruneAuditEvents: (before, batch) => ({
    sql: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
    parameters: [before, batch],
  }),
  eraseAuditClientAddresses: (userId) => ({
    sql: 'UPDATE audit_events SET client_address = NULL WHERE user_id = $1 AND client_address IS NOT NULL',
    parameters: [userId],
  }),
}
