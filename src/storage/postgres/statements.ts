import { AUDIT_COLUMNS, auditColumnValues } from '../sql/audit-rows.js'
import { AVATAR_COLUMNS, avatarValues } from '../sql/avatar-rows.js'
import {
  MAIL_CLAIM_ORDERS,
  OUTBOX_COLUMNS,
  OUTBOX_INSERT_COLUMNS,
  WEBHOOK_CLAIM_ORDER,
} from '../sql/mail-rows.js'
import { withNumberedPlaceholders } from '../sql/numbered-placeholders.js'
import {
  questionMarkAccountStatements,
  questionMarkKeepingWrites,
  questionMarkUserReads,
} from '../sql/question-mark-account-statements.js'
import { questionMarkFactorStatements } from '../sql/question-mark-factor-statements.js'
import { questionMarkMailStatements } from '../sql/question-mark-mail-statements.js'
import { questionMarkAuditPage } from '../sql/question-mark-statements.js'
import {
  SESSION_COLUMNS,
  SESSION_INSERT_COLUMNS,
  SESSION_ORDER,
  SESSION_UPSERT_SET,
  SINGLE_SLOT,
  sessionValues,
} from '../sql/session-rows.js'
import type { SqlStatements } from '../sql/sql-statements.js'

/** The SQL stores' statements for PostgreSQL: `$n` placeholders (a value used twice bound once), INSERT … ON CONFLICT for the upsert. */
export const postgresStatements: SqlStatements = {
  // the e-mail codes' and the outbox's statements that SQLite and MySQL share, numbered, and the accounts'
  ...withNumberedPlaceholders(questionMarkMailStatements),
  ...withNumberedPlaceholders(questionMarkAccountStatements),
  ...withNumberedPlaceholders(questionMarkFactorStatements),
  ...withNumberedPlaceholders(
    questionMarkUserReads(
      "SELECT string_agg(provider, ',' ORDER BY provider) FROM oauth_accounts WHERE oauth_accounts.user_id = users.id",
      ' COLLATE "C"',
    ),
  ),
  // The accounts with the role are counted with FOR NO KEY UPDATE, in id order, the row itself among them, before the
  // row is changed: of two writes that each take one of the last two accounts, the later waits for the earlier's
  // locks (in the same order: no deadlock), then reads each account as last committed, one that lost the role or
  // was disabled skipped, and counts one. NO KEY: a session's start (its foreign key's KEY SHARE) does not wait
  ...withNumberedPlaceholders(
    questionMarkKeepingWrites(
      `SELECT count(*) FROM (
        SELECT id FROM users WHERE role = ? AND status = 'active' ORDER BY id FOR NO KEY UPDATE
      ) AS kept`,
      // a SELECT's placeholders are typed text unless cast (enqueueOutboxIfUser)
      '?, ?, ?, ?, ?, ?::bigint, ?::bigint, ?::bigint',
    ),
  ),
  ...withNumberedPlaceholders(questionMarkAuditPage()),
  updatePasswordHash: (id, passwordHash) => ({
    sql: 'UPDATE users SET password_hash = $1 WHERE id = $2',
    parameters: [passwordHash, id],
  }),
  claimAddress: (id) => ({
    sql: "UPDATE users SET email_verified = TRUE, password_hash = '' WHERE id = $1 AND NOT email_verified",
    parameters: [id],
  }),
  markEmailVerified: (id) => ({
    sql: 'UPDATE users SET email_verified = TRUE WHERE id = $1',
    parameters: [id],
  }),
  changeEmail: (id, email) => ({
    sql: 'UPDATE users SET email = $1, email_verified = TRUE WHERE id = $2',
    parameters: [email, id],
  }),
  deleteUser: (id) => ({
    sql: 'DELETE FROM users WHERE id = $1',
    parameters: [id],
  }),
  startSession: (session, slot) => ({
    sql: `INSERT INTO sessions (${SESSION_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
      ON CONFLICT (user_id, slot) DO UPDATE SET ${SESSION_UPSERT_SET}`,
    parameters: sessionValues(session, slot),
  }),
  countSessions: (userId) => ({
    sql: 'SELECT COUNT(*) AS sessions, MIN(expires_at) AS soonest FROM sessions WHERE user_id = $1',
    parameters: [userId],
  }),
  findSessionBesideSingle: (userId) => ({
    sql: `SELECT id FROM sessions WHERE user_id = $1 AND slot <> '${SINGLE_SLOT}' LIMIT 1`,
    parameters: [userId],
  }),
  endSessionsBesideSingle: (userId) => ({
    sql: `DELETE FROM sessions WHERE user_id = $1 AND slot <> '${SINGLE_SLOT}'`,
    parameters: [userId],
  }),
  evictSessions: (userId, keep, now) => ({
    sql: `DELETE FROM sessions WHERE user_id = $1 AND (expires_at <= $2 OR id IN (
      SELECT id FROM sessions WHERE user_id = $1 AND expires_at > $2 ORDER BY ${SESSION_ORDER} OFFSET $3))`,
    parameters: [userId, now, keep],
  }),
  // with a lifetime, the same single UPDATE capped by the row's own created_at (question-mark-statements.ts)
  rotateSession: (userId, currentDigest, next, now) =>
    next.lifetimeMs === null
      ? {
          sql: `UPDATE sessions SET token_digest = $1, expires_at = $2, previous_digest = $3, rotated_at = $4,
        last_used_at = $4, client_address = $5
      WHERE user_id = $6 AND token_digest = $3 AND expires_at > $4`,
          parameters: [next.digest, next.expiresAt, currentDigest, now, next.clientAddress, userId],
        }
      : {
          sql: `UPDATE sessions SET token_digest = $1, expires_at = LEAST($2, created_at + $7), previous_digest = $3,
        rotated_at = $4, last_used_at = $4, client_address = $5
      WHERE user_id = $6 AND token_digest = $3 AND expires_at > $4 AND created_at > $8`,
          parameters: [
            next.digest,
            next.expiresAt,
            currentDigest,
            now,
            next.clientAddress,
            userId,
            next.lifetimeMs,
            now - next.lifetimeMs,
          ],
        },
  findSessionById: (userId, id, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND id = $2 AND expires_at > $3`,
    parameters: [userId, id, now],
  }),
  findSessionByDigest: (userId, digest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND token_digest = $2 AND expires_at > $3`,
    parameters: [userId, digest, now],
  }),
  findSessionByPreviousDigest: (userId, previousDigest, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND previous_digest = $2 AND expires_at > $3`,
    parameters: [userId, previousDigest, now],
  }),
  listSessions: (userId, now) => ({
    sql: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = $1 AND expires_at > $2
      ORDER BY ${SESSION_ORDER}`,
    parameters: [userId, now],
  }),
  markSessionSecondFactor: (userId, id, now) => ({
    sql: 'UPDATE sessions SET second_factor = TRUE WHERE user_id = $1 AND id = $2 AND expires_at > $3',
    parameters: [userId, id, now],
  }),
  endSession: (userId, id, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1 AND id = $2 AND expires_at > $3',
    parameters: [userId, id, now],
  }),
  endSessions: (userId, except, now) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1 AND id <> $2 AND expires_at > $3',
    parameters: [userId, except, now],
  }),
  endSessionsReturningIds: (userId, except, now) => [
    {
      sql: 'DELETE FROM sessions WHERE user_id = $1 AND id <> $2 AND expires_at > $3 RETURNING id',
      parameters: [userId, except, now],
    },
  ],
  deleteSessions: (userId) => ({
    sql: 'DELETE FROM sessions WHERE user_id = $1',
    parameters: [userId],
  }),
  // one text whatever the batch's size, eight array parameters: PostgreSQL parses no new statement per batch size
  // and binds eight values, not eight per row: a refresh's audit row costs the server 9 µs of CPU, against 18-20 µs as a
  // multi-row VALUES (docs/performance.md)
  appendAuditEvents: (events) => ({
    sql: `INSERT INTO audit_events (${AUDIT_COLUMNS})
      SELECT occurred_at, event, user_id, client_address, request_id, reason, omitted, actor
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[],
          $8::text[])
        WITH ORDINALITY AS batch (occurred_at, event, user_id, client_address, request_id, reason, omitted, actor,
          position)
      ORDER BY position`,
    parameters: auditColumnValues(events),
  }),
  listAuditEvents: (userId, since, limit) => ({
    sql: `SELECT ${AUDIT_COLUMNS} FROM (
        SELECT id, ${AUDIT_COLUMNS} FROM audit_events WHERE user_id = $1 AND occurred_at >= $2
        ORDER BY occurred_at DESC, id DESC LIMIT $3
      ) AS latest ORDER BY occurred_at, id`,
    parameters: [userId, since, limit],
  }),
  pruneAuditEvents: (before, batch) => ({
    sql: `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
    parameters: [before, batch],
  }),
  eraseAuditClientAddresses: (userId) => ({
    sql: 'UPDATE audit_events SET client_address = NULL WHERE user_id = $1 AND client_address IS NOT NULL',
    parameters: [userId],
  }),
  pruneEmailCodes: (now, batch) => ({
    sql: `DELETE FROM email_codes WHERE (address, purpose, user_id) IN (
      SELECT address, purpose, user_id FROM email_codes WHERE expires_at <= $1 LIMIT $2)`,
    parameters: [now, batch],
  }),
  // the mail lane's two orders in one statement (MAIL_CLAIM_ORDERS), the codes limited to what the others left of the
  // claim; the webhook lane's one order (WEBHOOK_CLAIM_ORDER). SKIP LOCKED: a concurrent claim passes over the rows
  // this one has locked instead of waiting for them; a row claimed and committed since this statement's snapshot is
  // read again as it now is (held: no longer matched)
  claimOutbox: (lane, claimant, now, leaseUntil) => [
    lane === 'webhook'
      ? (limit) => ({
          sql: `UPDATE outbox SET claimant = $1, lease_until = $2
            WHERE id IN (
              SELECT id FROM outbox WHERE ${WEBHOOK_CLAIM_ORDER.where} AND next_attempt_at <= $3 AND lease_until <= $3
              ORDER BY ${WEBHOOK_CLAIM_ORDER.order} LIMIT $4 FOR UPDATE SKIP LOCKED)
            RETURNING ${OUTBOX_COLUMNS}`,
          parameters: [claimant, leaseUntil, now, limit],
        })
      : (limit) => ({
          sql: `WITH others AS (
              SELECT id FROM outbox WHERE ${MAIL_CLAIM_ORDERS.others.where} AND next_attempt_at <= $3 AND lease_until <= $3
              ORDER BY ${MAIL_CLAIM_ORDERS.others.order} LIMIT $4 FOR UPDATE SKIP LOCKED
            ), codes AS (
              SELECT id FROM outbox WHERE ${MAIL_CLAIM_ORDERS.codes.where} AND next_attempt_at <= $3 AND lease_until <= $3
              ORDER BY ${MAIL_CLAIM_ORDERS.codes.order} LIMIT $4 - (SELECT COUNT(*) FROM others) FOR UPDATE SKIP LOCKED
            )
            UPDATE outbox SET claimant = $1, lease_until = $2
            WHERE id IN (SELECT id FROM others UNION ALL SELECT id FROM codes)
            RETURNING ${OUTBOX_COLUMNS}`,
          parameters: [claimant, leaseUntil, now, limit],
        }),
  ],
  // a SELECT's placeholders are typed text unless cast: the BIGINT columns' values are cast
  enqueueOutboxIfUser: (userId, message) => ({
    sql: `INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS})
      SELECT $1, $2, $3, $4, $5, $6::bigint, $6::bigint, $7::bigint FROM users WHERE id = $8`,
    parameters: [
      message.id,
      message.lane,
      message.userId,
      message.recipient,
      message.payload,
      message.createdAt,
      message.codeExpiresAt,
      userId,
    ],
  }),
  claimedOutbox: () => null,
  renewOutbox: (ids, claimant, leaseUntil) => ({
    sql: 'UPDATE outbox SET lease_until = $1 WHERE claimant = $2 AND id = ANY($3::bpchar[]) RETURNING id',
    parameters: [leaseUntil, claimant, ids],
  }),
  heldOutbox: () => null,
  // the ids as one array: one text whatever their number
  releaseOutbox: (ids, claimant) => ({
    sql: 'UPDATE outbox SET claimant = NULL, lease_until = 0 WHERE claimant = $1 AND id = ANY($2::bpchar[])',
    parameters: [claimant, ids],
  }),
  incrementRateCounter: (key, windowMs, now) => ({
    sql: `INSERT INTO rate_counters (counter_key, window_ends, hits) VALUES ($1, $2, 1)
      ON CONFLICT (counter_key) DO UPDATE SET
        hits = CASE WHEN rate_counters.window_ends > $3 THEN rate_counters.hits + 1 ELSE 1 END,
        window_ends = CASE WHEN rate_counters.window_ends > $3 THEN rate_counters.window_ends
          ELSE excluded.window_ends END
      RETURNING hits, window_ends`,
    parameters: [key, now + windowMs, now],
  }),
  pruneRateCounters: (now, batch) => ({
    sql: `DELETE FROM rate_counters WHERE counter_key IN (
      SELECT counter_key FROM rate_counters WHERE window_ends <= $1 LIMIT $2)`,
    parameters: [now, batch],
  }),
  putAvatar: (avatar) => ({
    sql: `INSERT INTO avatars (${AVATAR_COLUMNS}) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (user_id) DO UPDATE SET
        id = excluded.id, content_type = excluded.content_type, data = excluded.data, created_at = excluded.created_at`,
    parameters: avatarValues(avatar),
  }),
  // The account's links are counted with FOR UPDATE: a snapshot read would let two unlinks of an account's last two
  // links each see the other and delete both (READ COMMITTED takes the snapshot at the statement's start). Locked,
  // each link is read as last committed, a deleted one skipped, and in provider order, so that concurrent unlinks of
  // one account wait for each other instead of deadlocking: the second then counts one link and deletes nothing.
  unlinkProvider: (userId, provider) => ({
    sql: `DELETE FROM oauth_accounts WHERE user_id = $1 AND provider = $2 AND (
      EXISTS (SELECT 1 FROM users WHERE users.id = $1 AND users.password_hash <> '')
      OR (SELECT count(*) FROM (
        SELECT provider FROM oauth_accounts WHERE user_id = $1 ORDER BY provider FOR UPDATE
      ) AS linked) > 1)`,
    parameters: [userId, provider],
  }),
  pruneTickets: (now, batch) => ({
    sql: `DELETE FROM oauth_tickets WHERE digest IN (
      SELECT digest FROM oauth_tickets WHERE expires_at <= $1 LIMIT $2)`,
    parameters: [now, batch],
  }),
  // NO KEY UPDATE: the account's factor writes wait for each other, but not the foreign-key checks of rows that name
  // the account (KEY SHARE), which a session's start or a factor's addition takes
  lockAccount: (userId) => ({
    sql: 'SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE',
    parameters: [userId],
  }),
  // the outer condition again: a factor confirmed between the subquery's snapshot and the deletion's lock is read
  // again as committed, and kept
  prunePendingFactors: (before, batch) => ({
    sql: `DELETE FROM mfa_factors WHERE NOT confirmed AND created_at <= $1 AND id IN (
      SELECT id FROM mfa_factors WHERE NOT confirmed AND created_at <= $1 ORDER BY created_at LIMIT $2)`,
    parameters: [before, batch],
  }),
  // the digests as one array: one text whatever their number
  insertRecoveryCodes: (userId, digests) => ({
    sql: 'INSERT INTO mfa_recovery_codes (user_id, digest) SELECT $1::text, unnest($2::text[])',
    parameters: [userId, digests],
  }),
  insertServiceKeyIfAbsent: (name, value) => ({
    sql: 'INSERT INTO service_keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
    parameters: [name, value],
  }),
  replaceServiceKey: (name, expected, value) => ({
    sql: 'UPDATE service_keys SET value = $1 WHERE name = $2 AND value = $3',
    parameters: [value, name, expected],
  }),
}
