import {
  codeKeyValues,
  EMAIL_CODE_COLUMNS,
  laneLiteral,
  OUTBOX_INSERT_COLUMNS,
  outboxValues,
} from './mail-rows.js'
import type { SqlStatements } from './sql-statements.js'

/**
 * The statements of the e-mail codes, the outbox and the disabled webhook URLs (migrations 0005, 0007, 0012) that
 * SQLite and MySQL/MariaDB write alike, with `?` placeholders (questionMarkStatements includes them; PostgreSQL
 * numbers them).
 */
export const questionMarkMailStatements: Pick<
  SqlStatements,
  | 'findEmailCodes'
  | 'insertEmailCodes'
  | 'replaceEmailCodes'
  | 'removeEmailCodes'
  | 'deleteEmailCodes'
  | 'enqueueOutbox'
  | 'enqueueOutboxIfUser'
  | 'findDueOutbox'
  | 'removeOutbox'
  | 'failOutbox'
  | 'postponeOutbox'
  | 'deleteOutbox'
  | 'outboxStats'
  | 'outboxStatsByRecipient'
  | 'disableWebhookUrl'
  | 'enableWebhookUrl'
  | 'disabledWebhookUrls'
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
  // the values selected from the account's row: none when it is gone
  enqueueOutboxIfUser: (userId, message) => {
    const values = outboxValues(message)
    return {
      sql: `INSERT INTO outbox (${OUTBOX_INSERT_COLUMNS})
        SELECT ${values.map(() => '?').join(', ')} FROM users WHERE id = ?`,
      parameters: [...values, userId],
    }
  },
  findDueOutbox: (lane, now) => ({
    sql: `SELECT id FROM outbox WHERE lane = ${laneLiteral(lane)} AND next_attempt_at <= ? AND lease_until <= ? LIMIT 1`,
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
  // on outbox_recipient; a held message is its claimant's to settle
  postponeOutbox: (lane, recipient, until, now) => ({
    sql: `UPDATE outbox SET next_attempt_at = ?
      WHERE recipient = ? AND lane = ${laneLiteral(lane)} AND next_attempt_at < ? AND lease_until <= ?`,
    parameters: [until, recipient, until, now],
  }),
  // docs/api.md R6.4.6, R6.5.3: an account's deletion removes its mail, never an event (an event's recipient is a
  // URL's digest, which no address equals, and its user_id NULL: the lane says so once more)
  deleteOutbox: (userId, address) => ({
    sql: "DELETE FROM outbox WHERE (user_id = ? OR recipient = ?) AND lane = 'mail'",
    parameters: [userId, address],
  }),
  outboxStats: (lane) => ({
    sql: `SELECT COUNT(*) AS queued, MIN(created_at) AS oldest FROM outbox WHERE lane = ${laneLiteral(lane)}`,
    parameters: [],
  }),
  outboxStatsByRecipient: (lane) => ({
    sql: `SELECT recipient, COUNT(*) AS queued, MIN(created_at) AS oldest FROM outbox WHERE lane = ${laneLiteral(lane)}
      GROUP BY recipient`,
    parameters: [],
  }),
  disableWebhookUrl: (urlDigest, at) => ({
    sql: 'INSERT INTO webhook_disabled_urls (url_digest, disabled_at) VALUES (?, ?)',
    parameters: [urlDigest, at],
  }),
  enableWebhookUrl: (urlDigest) => ({
    sql: 'DELETE FROM webhook_disabled_urls WHERE url_digest = ?',
    parameters: [urlDigest],
  }),
  disabledWebhookUrls: () => ({
    sql: 'SELECT url_digest, disabled_at FROM webhook_disabled_urls ORDER BY disabled_at, url_digest',
    parameters: [],
  }),
}
