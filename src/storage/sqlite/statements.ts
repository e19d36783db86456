import { questionMarkStatements } from '../sql/question-mark-statements.js'
import {
  SESSION_INSERT_COLUMNS,
  SESSION_ORDER,
  SESSION_UPSERT_SET,
  sessionValues,
} from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for SQLite: `?` placeholders, INSERT … ON CONFLICT for the upsert, subqueries with
 * LIMIT to bound the eviction and the pruning.
 */
export const sqliteStatements: SqlStatements = {
  ...questionMarkStatements,
  startSession: (session, slot) => ({
    sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (user_id, slot) DO UPDATE SET ${SESSION_UPSERT_SET}`,
    parameters: sessionValues(session, slot),
  }),
  // LIMIT -1: no limit, only the offset past the sessions kept
  evictSessions: (userId, keep, now) => ({
    sql: `DELETE FROM sessions WHERE user_id = ? AND (expires_at <= ? OR id IN (
      SELECT id FROM sessions WHERE user_id = ? AND expires_at > ? ORDER BY ${SESSION_ORDER} LIMIT -1 OFFSET ?))`,
    parameters: [userId, now, userId, now, keep],
  }),
  // SQLite's DELETE takes no LIMIT unless built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT: the rowids are chosen first
  pruneAuditEvents: (before, batch) => ({
    sql: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?)`,
    parameters: [before, batch],
  }),
}
