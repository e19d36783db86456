import {
  CODES_PER_KEY,
  type CodeKey,
  type NewOutboxMessage,
  OUTBOX_LANES,
  type OutboxCount,
  type OutboxLane,
  type OutboxMessage,
} from '../stores.js'

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
  /**
   * Keyed digest (HMAC-SHA-256 hex) of the reset key mailed with it (docs/api.md R4.14.2): a `reset_password` code
   * sent since reset keys were made; absent on every other code.
   */
  resetKeyDigest?: string
}

/** One code in `codes`: its digest, expiry and tries, and the digest of its reset key if it has one. */
const STORED_CODE = /^([0-9a-f]{64}):(\d{1,15}):(\d{1,3})(?::([0-9a-f]{64}))?$/

/**
 * The most characters of a key's `codes` (migration 0007: VARCHAR(1024) in PostgreSQL and MySQL, a CHECK in SQLite).
 * CODES_PER_KEY codes without reset keys take at most 849; with reset keys, six take at most 899 (149 each, commas
 * between them), and EmailCodeStore.put keeps fewer than CODES_PER_KEY when they do not fit.
 */
export const CODES_MAX_LENGTH = 1024

/**
 * A key's codes as the `codes` column holds them (migration 0007), oldest first: `<digest>:<expires at>:<tries>`
 * each, followed by `:<reset key digest>` for a code that has one, separated by commas. An entry without a reset key
 * is what every version since migration 0007 wrote, so a row of before reset keys reads as it did.
 */
export function encodeCodes(codes: readonly StoredCode[]): string {
  return codes.map(encodeCode).join(',')
}

function encodeCode({ digest, expiresAt, tries, resetKeyDigest }: StoredCode): string {
  const entry = `${digest}:${expiresAt}:${tries}`
  return resetKeyDigest === undefined ? entry : `${entry}:${resetKeyDigest}`
}

/** The codes of an `email_codes.codes` value; throws on a value encodeCodes cannot have written. */
export function decodeCodes(text: string): StoredCode[] {
  return text.split(',').map((entry) => {
    const match = STORED_CODE.exec(entry)
    if (match === null) throw new Error('email_codes.codes holds a value that is no list of codes')
    const code = { digest: match[1] as string, expiresAt: Number(match[2]), tries: Number(match[3]) }
    return match[4] === undefined ? code : { ...code, resetKeyDigest: match[4] }
  })
}

/**
 * The newest of `codes` (oldest first) that a key keeps: at most CODES_PER_KEY, and no more than fit
 * CODES_MAX_LENGTH; the newest always fits.
 */
export function newestThatFit(codes: readonly StoredCode[]): StoredCode[] {
  const kept = codes.slice(-CODES_PER_KEY)
  while (kept.length > 1 && encodeCodes(kept).length > CODES_MAX_LENGTH) kept.shift()
  return kept
}

/**
 * The columns of `outbox` that hold an OutboxMessage, in the order of every SELECT (migration 0005; code_expires_at
 * migration 0008; lane migration 0012).
 */
export const OUTBOX_COLUMNS =
  'id, lane, user_id, recipient, payload, created_at, attempts, next_attempt_at, code_expires_at'

/** The columns a new message's row is written with, in the order of outboxValues. */
export const OUTBOX_INSERT_COLUMNS =
  'id, lane, user_id, recipient, payload, created_at, next_attempt_at, code_expires_at'

/**
 * The mail lane's claim orders (OutboxStore.claim): the messages that are not codes first, the longest due first,
 * then the codes, the latest expiry first. Each is read from one end of its index (migrations 0008, 0012), so that a
 * claim reads no further than the messages it takes (and those held by others or not yet due among them). The lane
 * is written as a literal, so that SQLite and PostgreSQL see that the partial index of the first one serves it.
 */
export const MAIL_CLAIM_ORDERS = {
  others: { where: "lane = 'mail' AND code_expires_at IS NULL", order: 'next_attempt_at, id' },
  codes: {
    where: "lane = 'mail' AND code_expires_at IS NOT NULL",
    order: 'code_expires_at DESC, next_attempt_at DESC, id DESC',
  },
} as const

/** The webhook lane's claim order: the longest due first, on outbox_due (migration 0012); no event carries a code. */
export const WEBHOOK_CLAIM_ORDER = { where: "lane = 'webhook'", order: 'next_attempt_at, id' } as const

/** A lane as SQL text: one of OUTBOX_LANES, checked, so that it can be written as a literal. */
export function laneLiteral(lane: OutboxLane): string {
  if (!OUTBOX_LANES.includes(lane)) throw new RangeError('no such outbox lane')
  return `'${lane}'`
}

/** The values of a new message's row, for OUTBOX_INSERT_COLUMNS. */
export function outboxValues(message: NewOutboxMessage) {
  // due at once
  return [
    message.id,
    message.lane,
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
    lane: row.lane === 'webhook' ? 'webhook' : 'mail',
    userId: row.user_id === null ? null : String(row.user_id),
    recipient: String(row.recipient),
    payload: String(row.payload),
    createdAt: Number(row.created_at),
    codeExpiresAt: row.code_expires_at == null ? null : Number(row.code_expires_at),
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
  }
}

/**
 * Messages in claim order (MAIL_CLAIM_ORDERS, WEBHOOK_CLAIM_ORDER), whatever order a statement returned them in
 * (RETURNING has none).
 */
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

/** A row of OutboxStore.statsByRecipient's statement, or of outboxStats: `queued` and `oldest`. */
export function toOutboxCount(row: Record<string, unknown> | undefined): OutboxCount {
  return {
    queued: Number(row?.queued ?? 0),
    oldestCreatedAt: row?.oldest == null ? null : Number(row.oldest),
  }
}
