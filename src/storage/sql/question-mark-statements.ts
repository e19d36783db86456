import type { SqlStatements } from './sql-statements.js'

/**
 * The statements that SQLite and MySQL/MariaDB write alike, with `?` placeholders: all but the upsert of a refresh
 * token, which each engine spells its own way (sqlite/statements.ts, mysql/statements.ts). PostgreSQL numbers its
 * placeholders and has its own file.
 */
export const questionMarkStatements: Omit<SqlStatements, 'putRefreshToken'> = {
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
