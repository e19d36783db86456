import { questionMarkStatements } from '../sql/question-mark-statements.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for MySQL and MariaDB: `?` placeholders, INSERT … ON DUPLICATE KEY UPDATE for the
 * upsert. Its new values are bound a second time rather than read with VALUES(), which MySQL 8.0.20 deprecated,
 * or with a row alias, which MariaDB does not have.
 */
export const mysqlStatements: SqlStatements = {
  ...questionMarkStatements,
  putRefreshToken: (userId, token) => ({
    sql: `INSERT INTO refresh_tokens (user_id, token_digest, expires_at) VALUES (?, ?, ?)
      ON DUPLICATE KEY UPDATE token_digest = ?, expires_at = ?`,
    parameters: [userId, token.digest, token.expiresAt, token.digest, token.expiresAt],
  }),
  // MySQL refuses LIMIT in an IN subquery; its single-table DELETE takes ORDER BY and LIMIT itself
  pruneAuditEvents: (before, batch) => ({
    sql: 'DELETE FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?',
    parameters: [before, batch],
  }),
}
