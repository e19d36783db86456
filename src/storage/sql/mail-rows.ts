import type { CodeKey, OutboxMessage } from '../stores.js'

/** The user_id of a code that no account asked for (CodeKey.userId null): part of the primary key, so NOT NULL. */
const NO_USER = ''

/** A code's key as the columns (address, purpose, user_id) of `email_codes` hold it (migration 0005). */
export function codeKeyValues(key: CodeKey): [address: string, purpose: string, userId: string] {
  return [key.address, key.purpose, key.userId ?? NO_USER]
}

/** The columns of an `email_codes` row: its key, its codes, and when the last of them expires (migration 0007). */
export const EMAIL_CODE_COLUMNS = 'address, purpose, user_id, codes, expires_at'

/** One code of a key as `email_codes.codes` holds it. */
export interface StoredCode {
  /** Keyed digest (HMAC-SHA-256 hex) of the code. */
  digest: string
  /** Epoch milliseconds. */
  expiresAt: number
  /** Tries counted on it. */
  tries: number
}

/** One code in `codes`: its digest, expiry and tries. */
const STORED_CODE = /^([0-9a-f]{64}):(\d{1,15}):(\d{1,3})$/

/**
 * A key's codes as the `codes` column holds them (migration 0007), oldest first: `<digest>:<expires at>:<tries>`
 * each, separated by commas. CODES_PER_KEY of them take at most 849 characters, within the column's 1,024.
 */
export function encodeCodes(codes: readonly StoredCode[]): string {
  return codes.map(({ digest, expiresAt, tries }) => `${digest}:${expiresAt}:${tries}`).join(',')
}

/** The codes of an `email_codes.codes` value; throws on a value encodeCodes cannot have written. */
export function decodeCodes(text: string): StoredCode[] {
  return text.split(',').map((entry) => {
    const match = STORED_CODE.exec(entry)
    if (match === null) throw new Error('email_codes.codes holds a value that is no list of codes')
    return { digest: match[1] as string, expiresAt: Number(match[2]), tries: Number(match[3]) }
  })
}

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
