import { questionMarkStatements } from '../sql/question-mark-statements.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for SQLite: `?` placeholders, INSERT … ON CONFLICT for the upsert, a subquery to bound
 * the pruning.
 */
export const sqliteStatements: SqlStatements = {
  ...questionMarkStatements,
  putRefreshToken: (userId, token) => ({
    sql: `INSERT INTO refresh_tokens (user_id, token_digest, expires_at) VALUES (?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET token_digest = excluded.token_digest, expires_at = excluded.expires_at`,
    parameters: [userId, token.digest, token.expiresAt],
  }),
  // SQLite's DELETE takes no LIMIT unless built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT: the rowids are chosen first
  pruneAuditEvents: (before, batch) => ({
    sql: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?)`,
    parameters: [before, batch],
  }),
}
