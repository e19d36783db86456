import type { CodeKey, NewOutboxMessage, OutboxMessage } from '../stores.js'

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

/**
 * The columns of `outbox` that hold an OutboxMessage, in the order of every SELECT (migration 0005; code_expires_at
 * migration 0008).
 */
export const OUTBOX_COLUMNS =
  'id, user_id, recipient, payload, created_at, attempts, next_attempt_at, code_expires_at'

/** The columns a new message's row is written with, in the order of outboxValues. */
export const OUTBOX_INSERT_COLUMNS =
  'id, user_id, recipient, payload, created_at, next_attempt_at, code_expires_at'

/**
 * The claim's order (OutboxStore.claim): the messages that are not codes first, the longest due first, then the
 * codes, the latest expiry first. Each lane is read from one end of its index (migration 0008), so that a claim reads
 * no further than the messages it takes (and those held by others or not yet due among them).
 */
export const OUTBOX_LANES = {
  others: { where: 'code_expires_at IS NULL', order: 'next_attempt_at, id' },
  codes: {
    where: 'code_expires_at IS NOT NULL',
    order: 'code_expires_at DESC, next_attempt_at DESC, id DESC',
  },
} as const

/** The values of a new message's row, for OUTBOX_INSERT_COLUMNS. */
export function outboxValues(message: NewOutboxMessage) {
  // due at once
  return [
    message.id,
    message.userId,
    message.recipient,
    message.payload,
    message.createdAt,
    message.createdAt,
    message.codeExpiresAt,
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
    codeExpiresAt: row.code_expires_at == null ? null : Number(row.code_expires_at),
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
  }
}

/** Messages in claim order (OUTBOX_LANES), whatever order a statement returned them in (RETURNING has none). */
export function inClaimOrder(messages: OutboxMessage[]): OutboxMessage[] {
  const byId = (a: OutboxMessage, b: OutboxMessage) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  return messages.sort((a, b) => {
    if (a.codeExpiresAt === null || b.codeExpiresAt === null) {
      if (a.codeExpiresAt !== b.codeExpiresAt) return a.codeExpiresAt === null ? -1 : 1
      return a.nextAttemptAt - b.nextAttemptAt || byId(a, b)
    }
    return b.codeExpiresAt - a.codeExpiresAt || b.nextAttemptAt - a.nextAttemptAt || byId(b, a)
  })
}
