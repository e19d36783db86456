import { AUDIT_COLUMNS, auditRowValues, auditValuesList } from './audit-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements that SQLite and MySQL/MariaDB write alike, with `?` placeholders: all but the upsert of a refresh
 * token and the pruning of audit events, which each engine spells its own way (sqlite/statements.ts,
 * mysql/statements.ts). PostgreSQL numbers its placeholders and has its own file.
 */
export const questionMarkStatements: Omit<SqlStatements, 'putRefreshToken' | 'pruneAuditEvents'> = {
  findUserById: (id) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE id = ?',
    parameters: [id],
  }),
  findUserByEmail: (email) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE email = ?',
    parameters: [email],
  }),
  insertUser: (user) => ({
    sql: 'INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)',
    parameters: [user.id, user.email, user.passwordHash, user.createdAt],
  }),
  updatePasswordHash: (id, passwordHash) => ({
    sql: 'UPDATE users SET password_hash = ? WHERE id = ?',
    parameters: [passwordHash, id],
  }),
  // ids are 10 digits without a leading 0, so their text order is their numeric order
  listUsers: (after, limit) => ({
    sql: 'SELECT id, email, password_hash, created_at FROM users WHERE id > ? ORDER BY id LIMIT ?',
    parameters: [after, limit],
  }),
  deleteUser: (id) => ({
    sql: 'DELETE FROM users WHERE id = ?',
    parameters: [id],
  }),
  rotateRefreshToken: (userId, currentDigest, next, now) => ({
    sql: `UPDATE refresh_tokens SET token_digest = ?, expires_at = ?
      WHERE user_id = ? AND token_digest = ? AND expires_at > ?`,
    parameters: [next.digest, next.expiresAt, userId, currentDigest, now],
  }),
  deleteRefreshToken: (userId) => ({
    sql: 'DELETE FROM refresh_tokens WHERE user_id = ?',
    parameters: [userId],
  }),
  refreshTokenExpiry: (userId, now) => ({
    sql: 'SELECT expires_at FROM refresh_tokens WHERE user_id = ? AND expires_at > ?',
    parameters: [userId, now],
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
