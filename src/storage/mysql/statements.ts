import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for MySQL and MariaDB: `?` placeholders, INSERT … ON DUPLICATE KEY UPDATE for the
 * upsert. Its new values are bound a second time rather than read with VALUES(), which MySQL 8.0.20 deprecated,
 * or with a row alias, which MariaDB does not have.
 */
export const mysqlStatements: SqlStatements = {
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
  putRefreshToken: (userId, token) => ({
    sql: `INSERT INTO refresh_tokens (user_id, token_digest, expires_at) VALUES (?, ?, ?)
      ON DUPLICATE KEY UPDATE token_digest = ?, expires_at = ?`,
    parameters: [userId, token.digest, token.expiresAt, token.digest, token.expiresAt],
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
}
