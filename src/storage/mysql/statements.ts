import { questionMarkStatements } from '../sql/question-mark-statements.js'
import { SESSION_INSERT_COLUMNS, SESSION_ORDER, sessionValues } from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for MySQL and MariaDB: `?` placeholders, INSERT … ON DUPLICATE KEY UPDATE for the
 * upsert. Its new values are bound a second time rather than read with VALUES(), which MySQL 8.0.20 deprecated,
 * or with a row alias, which MariaDB does not have.
 */
export const mysqlStatements: SqlStatements = {
  ...questionMarkStatements,
  // the id is random, so the key that meets another row is (user_id, slot)
  startSession: (session, slot) => {
    const values = sessionValues(session, slot)
    return {
      sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON DUPLICATE KEY UPDATE id = ?, token_digest = ?, expires_at = ?, created_at = ?, last_used_at = ?,
          device = ?, client_address = ?, previous_digest = ?, rotated_at = ?`,
      parameters: [...values, values[0], ...values.slice(3)],
    }
  },
  // both refuse LIMIT in an IN subquery, and a subquery on the table a DELETE deletes from: the sessions beyond
  // the kept ones are chosen in a derived table, which each materializes first (LIMIT with an offset needs a
  // count: the largest there is)
  evictSessions: (userId, keep, now) => ({
    sql: `DELETE FROM sessions WHERE user_id = ? AND (expires_at <= ? OR id IN (
      SELECT id FROM (
        SELECT id FROM sessions WHERE user_id = ? AND expires_at > ?
        ORDER BY ${SESSION_ORDER} LIMIT 18446744073709551615 OFFSET ?
      ) AS beyond))`,
    parameters: [userId, now, userId, now, keep],
  }),
  // MySQL refuses LIMIT in an IN subquery; its single-table DELETE takes ORDER BY and LIMIT itself
  pruneAuditEvents: (before, batch) => ({
    sql: 'DELETE FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?',
    parameters: [before, batch],
  }),
}
