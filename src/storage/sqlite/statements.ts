import { AVATAR_COLUMNS, avatarValues } from '../sql/avatar-rows.js'
import { MAIL_CLAIM_ORDERS, OUTBOX_COLUMNS, WEBHOOK_CLAIM_ORDER } from '../sql/mail-rows.js'
import { questionMarkKeepingWrites, questionMarkUserReads } from '../sql/question-mark-account-statements.js'
import { questionMarkSessionRotation, questionMarkStatements } from '../sql/question-mark-statements.js'
import {
  SESSION_INSERT_COLUMNS,
  SESSION_ORDER,
  SESSION_UPSERT_SET,
  sessionValues,
} from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for SQLite: `?` placeholders, INSERT … ON CONFLICT for the upserts, subqueries with
 * LIMIT to bound the eviction, the pruning and the outbox's claim, RETURNING for what a write reports. Every write
 * runs on the one writer thread of the process, and processes sharing the file take its write lock in turn, so a
 * statement's subquery and its change are never split by another write.
 */
export const sqliteStatements: SqlStatements = {
  ...questionMarkStatements,
  ...questionMarkSessionRotation('MIN'),
  // no ORDER BY in the aggregate: SQLite would build a temporary B-tree for it on every read of an account, a cost
  // the benchmark's GET /auth/me showed; toUser sorts the few names instead
  ...questionMarkUserReads(
    "SELECT group_concat(provider, ',') FROM oauth_accounts WHERE oauth_accounts.user_id = users.id",
  ),
  // the count and the change are one statement on the one writer: no other write comes between them
  ...questionMarkKeepingWrites(
    "SELECT COUNT(*) FROM users AS kept WHERE kept.role = ? AND kept.status = 'active'",
  ),
  startSession: (session, slot) => ({
    sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
  // the rows' keys chosen first, as pruneTickets does (a DELETE takes no LIMIT here)
  pruneEmailCodes: (now, batch) => ({
    sql: `DELETE FROM email_codes WHERE (address, purpose, user_id) IN (
      SELECT address, purpose, user_id FROM email_codes WHERE expires_at <= ? LIMIT ?)`,
    parameters: [now, batch],
  }),
  // the mail lane's two orders in one statement (MAIL_CLAIM_ORDERS), the codes limited to what the others left of the
  // claim; `others` is materialized so that it is read once, and what it took counted, not read again. The webhook
  // lane has one order (WEBHOOK_CLAIM_ORDER).
  claimOutbox: (lane, claimant, now, leaseUntil) => [
    lane === 'webhook'
      ? (limit) => ({
          sql: `UPDATE outbox SET claimant = ?, lease_until = ?
            WHERE id IN (
              SELECT id FROM outbox WHERE ${WEBHOOK_CLAIM_ORDER.where} AND next_attempt_at <= ? AND lease_until <= ?
              ORDER BY ${WEBHOOK_CLAIM_ORDER.order} LIMIT ?)
            RETURNING ${OUTBOX_COLUMNS}`,
          parameters: [claimant, leaseUntil, now, now, limit],
        })
      : (limit) => ({
          sql: `WITH others AS MATERIALIZED (
              SELECT id FROM outbox WHERE ${MAIL_CLAIM_ORDERS.others.where} AND next_attempt_at <= ? AND lease_until <= ?
              ORDER BY ${MAIL_CLAIM_ORDERS.others.order} LIMIT ?
            ), codes AS (
              SELECT id FROM outbox WHERE ${MAIL_CLAIM_ORDERS.codes.where} AND next_attempt_at <= ? AND lease_until <= ?
              ORDER BY ${MAIL_CLAIM_ORDERS.codes.order} LIMIT ? - (SELECT COUNT(*) FROM others)
            )
            UPDATE outbox SET claimant = ?, lease_until = ?
            WHERE id IN (SELECT id FROM others UNION ALL SELECT id FROM codes)
            RETURNING ${OUTBOX_COLUMNS}`,
          parameters: [now, now, limit, now, now, limit, claimant, leaseUntil],
        }),
  ],
  claimedOutbox: () => null,
  renewOutbox: (ids, claimant, leaseUntil) => ({
    sql: `UPDATE outbox SET lease_until = ?
      WHERE claimant = ? AND id IN (SELECT value FROM json_each(?)) RETURNING id`,
    parameters: [leaseUntil, claimant, JSON.stringify(ids)],
  }),
  heldOutbox: () => null,
  // the ids as one JSON array: one text whatever their number, prepared once
  releaseOutbox: (ids, claimant) => ({
    sql: `UPDATE outbox SET claimant = NULL, lease_until = 0
      WHERE claimant = ? AND id IN (SELECT value FROM json_each(?))`,
    parameters: [claimant, JSON.stringify(ids)],
  }),
  // the existing row's columns are named bare, the proposed row's as excluded.*
  incrementRateCounter: (key, windowMs, now) => ({
    sql: `INSERT INTO rate_counters (counter_key, window_ends, hits) VALUES (?, ?, 1)
      ON CONFLICT (counter_key) DO UPDATE SET
        hits = CASE WHEN window_ends > ? THEN hits + 1 ELSE 1 END,
        window_ends = CASE WHEN window_ends > ? THEN window_ends ELSE excluded.window_ends END
      RETURNING hits, window_ends`,
    parameters: [key, now + windowMs, now, now],
  }),
  pruneRateCounters: (now, batch) => ({
    sql: `DELETE FROM rate_counters WHERE counter_key IN (
      SELECT counter_key FROM rate_counters WHERE window_ends <= ? LIMIT ?)`,
    parameters: [now, batch],
  }),
  putAvatar: (avatar) => ({
    sql: `INSERT INTO avatars (${AVATAR_COLUMNS}) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET
        id = excluded.id, content_type = excluded.content_type, data = excluded.data, created_at = excluded.created_at`,
    parameters: avatarValues(avatar),
  }),
  // its subqueries and the deletion run under the one writer: no unlink of the account's other link comes between
  unlinkProvider: (userId, provider) => ({
    sql: `DELETE FROM oauth_accounts WHERE user_id = ? AND provider = ? AND (
      EXISTS (SELECT 1 FROM users WHERE users.id = ? AND users.password_hash <> '')
      OR EXISTS (SELECT 1 FROM oauth_accounts AS other WHERE other.user_id = ? AND other.provider <> ?))`,
    parameters: [userId, provider, userId, userId, provider],
  }),
  pruneTickets: (now, batch) => ({
    sql: `DELETE FROM oauth_tickets WHERE digest IN (
      SELECT digest FROM oauth_tickets WHERE expires_at <= ? LIMIT ?)`,
    parameters: [now, batch],
  }),
  // the one writer runs each transaction whole: nothing to lock
  lockAccount: () => null,
  // `confirmed = 0`, the partial index's own condition, so that the index serves it
  prunePendingFactors: (before, batch) => ({
    sql: `DELETE FROM mfa_factors WHERE id IN (
      SELECT id FROM mfa_factors WHERE confirmed = 0 AND created_at <= ? ORDER BY created_at LIMIT ?)`,
    parameters: [before, batch],
  }),
  // the digests as one JSON array: one text whatever their number, prepared once
  insertRecoveryCodes: (userId, digests) => ({
    sql: 'INSERT INTO mfa_recovery_codes (user_id, digest) SELECT ?, value FROM json_each(?)',
    parameters: [userId, JSON.stringify(digests)],
  }),
  insertServiceKeyIfAbsent: (name, value) => ({
    sql: 'INSERT INTO service_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
    parameters: [name, value],
  }),
  replaceServiceKey: (name, expected, value) => ({
    sql: 'UPDATE service_keys SET value = ? WHERE name = ? AND value = ?',
    parameters: [value, name, expected],
  }),
}
