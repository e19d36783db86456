import { codeKeyValues, OUTBOX_INSERT_COLUMNS, outboxValues } from './mail-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements of the e-mail codes and the outbox (migration 0005) that SQLite and MySQL/MariaDB write alike, with
 * `?` placeholders (questionMarkStatements includes them).
 */
export const questionMarkMailStatements: Pick<
  SqlStatements,
  | 'countEmailCodeTry'
  | 'useEmailCode'
  | 'deleteEmailCodes'
  | 'pruneEmailCodes'
  | 'enqueueOutbox'
  | 'findDueOutbox'
  | 'removeOutbox'
  | 'failOutbox'
  | 'deleteOutbox'
  | 'outboxStats'
> = {
  countEmailCodeTry: (key, now, maxTries) => ({
    sql: `UPDATE email_codes SET tries = tries + 1
      WHERE address = ? AND purpose = ? AND user_id = ? AND expires_at > ? AND tries < ?`,
    parameters: [...codeKeyValues(key), now, maxTries],
  }),
  useEmailCode: (key, digest, now) => ({
    sql: `DELETE FROM email_codes
      WHERE address = ? AND purpose = ? AND user_id = ? AND code_digest = ? AND expires_at > ?`,
    parameters: [...codeKeyValues(key), digest, now],
  }),
  deleteEmailCodes: (userId, address) => ({
    sql: 'DELETE FROM email_codes WHERE user_id = ? OR address = ?',
    parameters: [userId, address],
  }),
  pruneEmailCodes: (now) => ({
    sql: 'DELETE FROM email_codes WHERE expires_at <= ?',
    parameters: [now],
  }),
  enqueueOutbox: (message) => {
    const values = outboxValues(message)
    return {
      sql: `INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS}) VALUES (${values.map(() => '?').join(', ')})`,
      parameters: values,
    }
  },
  findDueOutbox: (now) => ({
    sql: 'SELECT id FROM outbox WHERE next_attempt_at <= ? AND lease_until <= ? LIMIT 1',
    parameters: [now, now],
  }),
  removeOutbox: (id, claimant) => ({
    sql: 'DELETE FROM outbox WHERE id = ? AND claimant = ?',
    parameters: [id, claimant],
  }),
  failOutbox: (id, claimant, nextAttemptAt) => ({
    sql: `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, claimant = NULL, lease_until = 0
      WHERE id = ? AND claimant = ?`,
    parameters: [nextAttemptAt, id, claimant],
  }),
  deleteOutbox: (userId, address) => ({
    sql: 'DELETE FROM outbox WHERE user_id = ? OR recipient = ?',
    parameters: [userId, address],
  }),
  outboxStats: () => ({
    sql: 'SELECT COUNT(*) AS queued, MIN(created_at) AS oldest FROM outbox',
    parameters: [],
  }),
}
