import type { CodeKey, OutboxMessage } from '../stores.js'

/** The user_id of a code that no account asked for (CodeKey.userId null): part of the primary key, so NOT NULL. */
const NO_USER = ''

/** A code's key as the columns (address, purpose, user_id) of `email_codes` hold it (migration 0005). */
export function codeKeyValues(key: CodeKey): [address: string, purpose: string, userId: string] {
  return [key.address, key.purpose, key.userId ?? NO_USER]
}

/** The columns of an `email_codes` row: its key, then the code's digest, expiry and tries (migration 0005). */
export const EMAIL_CODE_COLUMNS = 'address, purpose, user_id, code_digest, expires_at, tries'

/** The columns of `outbox` that hold an OutboxMessage, in the order of every SELECT (migration 0005). */
export const OUTBOX_COLUMNS = 'id, user_id, recipient, payload, created_at, attempts, next_attempt_at'

/**
 * The order of a claim: the longest due first, then by id, so that every engine claims alike; outbox_due serves it
 * (migration 0005).
 */
export const OUTBOX_ORDER = 'next_attempt_at, id'

/** The values of a new message's row, for the columns id, user_id, recipient, payload, created_at, next_attempt_at. */
export function outboxValues(
  message: Pick<OutboxMessage, 'id' | 'userId' | 'recipient' | 'payload' | 'createdAt'>,
) {
  // due at once
  return [
    message.id,
    message.userId,
    message.recipient,
    message.payload,
    message.createdAt,
    message.createdAt,
  ]
}

/** A row of OUTBOX_COLUMNS as a driver returns it: PostgreSQL returns a BIGINT as a string. */
export function toOutboxMessage(row: Record<string, unknown>): OutboxMessage {
  return {
    id: String(row.id),
    userId: row.user_id === null ? null : String(row.user_id),
    recipient: String(row.recipient),
    payload: String(row.payload),
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
  }
}

/** Messages in claim order (OUTBOX_ORDER), whatever order a statement returned them in (RETURNING has none). */
export function inClaimOrder(messages: OutboxMessage[]): OutboxMessage[] {
  return messages.sort(
    (a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  )
}
