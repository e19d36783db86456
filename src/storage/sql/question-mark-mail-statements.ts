import { codeKeyValues, EMAIL_CODE_COLUMNS, OUTBOX_INSERT_COLUMNS, outboxValues } from './mail-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements of the e-mail codes and the outbox (migrations 0005, 0007) that SQLite and MySQL/MariaDB write
 * alike, with `?` placeholders (questionMarkStatements includes them).
 */
export const questionMarkMailStatements: Pick<
  SqlStatements,
  | 'findEmailCodes'
  | 'insertEmailCodes'
  | 'replaceEmailCodes'
  | 'removeEmailCodes'
  | 'deleteEmailCodes'
  | 'enqueueOutbox'
  | 'findDueOutbox'
  | 'removeOutbox'
  | 'failOutbox'
  | 'deleteOutbox'
  | 'outboxStats'
> = {
  findEmailCodes: (key) => ({
    sql: 'SELECT codes FROM email_codes WHERE address = ? AND purpose = ? AND user_id = ?',
    parameters: codeKeyValues(key),
  }),
  insertEmailCodes: (key, codes, expiresAt) => ({
    sql: `INSERT INTO email_codes (${EMAIL_CODE_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
    parameters: [...codeKeyValues(key), codes, expiresAt],
  }),
  replaceEmailCodes: (key, current, codes, expiresAt) => ({
    sql: `UPDATE email_codes SET codes = ?, expires_at = ?
      WHERE address = ? AND purpose = ? AND user_id = ? AND codes = ?`,
    parameters: [codes, expiresAt, ...codeKeyValues(key), current],
  }),
  removeEmailCodes: (key, current) => ({
    sql: 'DELETE FROM email_codes WHERE address = ? AND purpose = ? AND user_id = ? AND codes = ?',
    parameters: [...codeKeyValues(key), current],
  }),
  deleteEmailCodes: (userId, address) => ({
    sql: 'DELETE FROM email_codes WHERE user_id = ? OR address = ?',
    parameters: [userId, address],
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
