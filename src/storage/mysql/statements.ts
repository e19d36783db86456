import { AVATAR_COLUMNS, avatarValues } from '../sql/avatar-rows.js'
import { laneLiteral, MAIL_CLAIM_ORDERS, OUTBOX_COLUMNS, WEBHOOK_CLAIM_ORDER } from '../sql/mail-rows.js'
import { questionMarkKeepingWrites, questionMarkUserReads } from '../sql/question-mark-account-statements.js'
import { questionMarkSessionRotation, questionMarkStatements } from '../sql/question-mark-statements.js'
import { PACKED_COUNT_FACTOR } from '../sql/rate-counter-rows.js'
import { SESSION_INSERT_COLUMNS, SESSION_ORDER, sessionValues } from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/**
 * The SQL stores' statements for MySQL and MariaDB: `?` placeholders, INSERT … ON DUPLICATE KEY UPDATE for the
 * upserts. Their new values are bound a second time rather than read with VALUES(), which MySQL 8.0.20 deprecated,
 * or with a row alias, which MariaDB does not have. Neither has UPDATE … RETURNING (MariaDB's RETURNING is for INSERT
 * and DELETE only): a write reports through its LAST_INSERT_ID, or is followed by a read. An UPDATE's SET assigns
 * left to right, each expression seeing the columns assigned before it.
 */
export const mysqlStatements: SqlStatements = {
  ...questionMarkStatements,
  ...questionMarkSessionRotation('LEAST'),
  ...questionMarkUserReads(
    "SELECT GROUP_CONCAT(provider ORDER BY provider SEPARATOR ',') FROM oauth_accounts WHERE oauth_accounts.user_id = users.id",
  ),
  // The accounts with the role are counted in a derived table, which LIMIT keeps from being merged into the write (both
  // refuse a subquery on the table a write changes), so it is materialized first; FOR UPDATE reads each as last
  // committed and locks it, whatever the isolation level (the index users_role_status: that role's entries only).
  // Of two such writes that each take one of the last two accounts, the later counts what the earlier left. A write's
  // own row may be locked before the count locks the others, so two of them may deadlock: InnoDB rolls one back, and
  // it runs again (mysql-database.ts), counting anew
  ...questionMarkKeepingWrites(
    `SELECT COUNT(*) FROM (
      SELECT id FROM users WHERE role = ? AND status = 'active' ORDER BY id LIMIT 1000000000 FOR UPDATE
    ) AS kept`,
  ),
  // the id is random, so the key that meets another row is (user_id, slot)
  startSession: (session, slot) => {
    const values = sessionValues(session, slot)
    return {
      sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON DUPLICATE KEY UPDATE id = ?, token_digest = ?, expires_at = ?, created_at = ?, last_used_at = ?,
          device = ?, client_address = ?, previous_digest = ?, rotated_at = ?, second_factor = ?`,
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
  // no DELETE … RETURNING on MySQL: the rows are read and locked first (next-key locks on the user's index range,
  // so no session of the user starts in between), then deleted by the same condition
  endSessionsReturningIds: (userId, except, now) => [
    {
      sql: 'SELECT id FROM sessions WHERE user_id = ? AND id <> ? AND expires_at > ? FOR UPDATE',
      parameters: [userId, except, now],
    },
    {
      sql: 'DELETE FROM sessions WHERE user_id = ? AND id <> ? AND expires_at > ?',
      parameters: [userId, except, now],
    },
  ],
  // MySQL refuses LIMIT in an IN subquery; its single-table DELETE takes ORDER BY and LIMIT itself
  pruneAuditEvents: (before, batch) => ({
    sql: 'DELETE FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ?',
    parameters: [before, batch],
  }),
  pruneEmailCodes: (now, batch) => ({
    sql: 'DELETE FROM email_codes WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
    parameters: [now, batch],
  }),
  // both refuse LIMIT in an IN subquery; a single-table UPDATE takes ORDER BY and LIMIT itself, in one order only:
  // one statement an order (MAIL_CLAIM_ORDERS), the codes given what the others left; the webhook lane's one order
  // (WEBHOOK_CLAIM_ORDER) on outbox_due. Each locks the rows it reads, in its index's order: a concurrent claim waits
  // for the rows this one holds, then reads them as committed (held: no longer matched) and goes on past them
  claimOutbox: (lane, claimant, now, leaseUntil) =>
    (lane === 'webhook' ? [WEBHOOK_CLAIM_ORDER] : [MAIL_CLAIM_ORDERS.others, MAIL_CLAIM_ORDERS.codes]).map(
      (order) => (limit: number) => ({
        sql: `UPDATE outbox SET claimant = ?, lease_until = ?
          WHERE ${order.where} AND next_attempt_at <= ? AND lease_until <= ? ORDER BY ${order.order} LIMIT ?`,
        parameters: [claimant, leaseUntil, now, now, limit],
      }),
    ),
  // what the claim took is in its lane, due (outbox_due's range) and held by its claimant, a value no other claim has
  claimedOutbox: (lane, claimant, now) => ({
    sql: `SELECT ${OUTBOX_COLUMNS} FROM outbox
      WHERE lane = ${laneLiteral(lane)} AND next_attempt_at <= ? AND claimant = ?`,
    parameters: [now, claimant],
  }),
  renewOutbox: (ids, claimant, leaseUntil) => ({
    sql: `UPDATE outbox SET lease_until = ? WHERE claimant = ? AND id IN (${ids.map(() => '?').join(', ')})`,
    parameters: [leaseUntil, claimant, ...ids],
  }),
  // a message's claimant changes only with a claim of another (or its release): whatever still names this one, the
  // renewal before found held
  heldOutbox: (ids, claimant) => ({
    sql: `SELECT id FROM outbox WHERE claimant = ? AND id IN (${ids.map(() => '?').join(', ')})`,
    parameters: [claimant, ...ids],
  }),
  releaseOutbox: (ids, claimant) => ({
    sql: `UPDATE outbox SET claimant = NULL, lease_until = 0
      WHERE claimant = ? AND id IN (${ids.map(() => '?').join(', ')})`,
    parameters: [claimant, ...ids],
  }),
  // the count, then the window (restarted when the count did, so seeing the new hits), and the pair packed into
  // LAST_INSERT_ID(expr), which the answer carries (rate-counter-rows.ts); on insert, the window's end is now plus
  // the packed value's upper half, the window
  incrementRateCounter: (key, windowMs, now) => ({
    sql: `INSERT INTO rate_counters (counter_key, window_ends, hits)
      VALUES (?, ? + LAST_INSERT_ID(? * ${PACKED_COUNT_FACTOR} + 1) DIV ${PACKED_COUNT_FACTOR}, 1)
      ON DUPLICATE KEY UPDATE
        hits = IF(window_ends > ?, hits + 1, 1),
        window_ends = ? + LAST_INSERT_ID(
          IF(hits = 1, ?, window_ends - ?) * ${PACKED_COUNT_FACTOR} + hits) DIV ${PACKED_COUNT_FACTOR}`,
    parameters: [key, now, windowMs, now, now, windowMs, now],
  }),
  pruneRateCounters: (now, batch) => ({
    sql: 'DELETE FROM rate_counters WHERE window_ends <= ? ORDER BY window_ends LIMIT ?',
    parameters: [now, batch],
  }),
  // REPLACE: the row of the user_id (the primary key) is deleted and the new one inserted in one statement, the image
  // sent once, where ON DUPLICATE KEY UPDATE would bind it a second time (see above); nothing refers to an avatar
  putAvatar: (avatar) => ({
    sql: `REPLACE INTO avatars (${AVATAR_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
    parameters: avatarValues(avatar),
  }),
  // Both refuse a subquery on the table a DELETE deletes from: the account's links are counted in a derived table,
  // which LIMIT (far above an account's one link per provider) keeps from being merged into the DELETE, so it is
  // materialized first. FOR UPDATE, as in PostgreSQL
  // (postgres/statements.ts), whatever the isolation level: each link is read as last committed, so that of
  // concurrent unlinks of one account the later one counts what the earlier left. The DELETE's own scan locks its row
  // before the count locks the others, so two such unlinks may deadlock: InnoDB rolls one back, and it runs again
  // (mysql-database.ts)
  unlinkProvider: (userId, provider) => ({
    sql: `DELETE FROM oauth_accounts WHERE user_id = ? AND provider = ? AND (
      EXISTS (SELECT 1 FROM users WHERE users.id = ? AND users.password_hash <> '')
      OR (SELECT COUNT(*) FROM (
        SELECT provider FROM oauth_accounts WHERE user_id = ? ORDER BY provider LIMIT 1000 FOR UPDATE
      ) AS linked) > 1)`,
    parameters: [userId, provider, userId, userId],
  }),
  pruneTickets: (now, batch) => ({
    sql: 'DELETE FROM oauth_tickets WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
    parameters: [now, batch],
  }),
  lockAccount: (userId) => ({
    sql: 'SELECT id FROM users WHERE id = ? FOR UPDATE',
    parameters: [userId],
  }),
  // the single-table DELETE takes ORDER BY and LIMIT itself, and checks its condition on the rows it locks
  prunePendingFactors: (before, batch) => ({
    sql: 'DELETE FROM mfa_factors WHERE confirmed = FALSE AND created_at <= ? ORDER BY created_at LIMIT ?',
    parameters: [before, batch],
  }),
  insertRecoveryCodes: (userId, digests) => ({
    sql: `INSERT INTO mfa_recovery_codes (user_id, digest) VALUES ${digests.map(() => '(?, ?)').join(', ')}`,
    parameters: digests.flatMap((digest) => [userId, digest]),
  }),
  // no INSERT IGNORE, which would also turn a value too long into a truncated one: an update that changes nothing
  insertServiceKeyIfAbsent: (name, value) => ({
    sql: 'INSERT INTO service_keys (name, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE name = name',
    parameters: [name, value],
  }),
  // compared as bytes: the binary collation of migration 0009 pads with spaces ('a' = 'a '), bytes do not
  replaceServiceKey: (name, expected, value) => ({
    sql: 'UPDATE service_keys SET value = ? WHERE name = ? AND CAST(value AS BINARY) = CAST(? AS BINARY)',
    parameters: [value, name, expected],
  }),
}
