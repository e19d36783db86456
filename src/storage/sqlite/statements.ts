import type { SqlStatements } from '../sql/sql-statements.js'

/** The SQL stores' statements for SQLite: `?` placeholders, INSERT … ON CONFLICT for the upsert. */
export const sqliteStatements: SqlStatements = {
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
      ON CONFLICT (user_id) DO UPDATE SET token_digest = excluded.token_digest, expires_at = excluded.expires_at`,
    parameters: [userId, token.digest, token.expiresAt],
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
