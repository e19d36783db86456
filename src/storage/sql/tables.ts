import type { ColumnType } from 'kysely'

/** Epoch milliseconds in a BIGINT column: PostgreSQL returns it as a string. */
type EpochMs = ColumnType<number | string, number, number>

/** The tables of migrations/<engine>/, as Kysely sees them. */
export interface Tables {
  users: {
    id: string
    email: string
    /** '' for an account without a usable password. */
    password_hash: string
    /** Migration 0005: a BOOLEAN in PostgreSQL, 0 or 1 in SQLite and MySQL. */
    email_verified: ColumnType<boolean | number, boolean | number | undefined, boolean | number>
    /** ISO 8601 UTC with milliseconds: the value the API returns, identical in every engine. */
    created_at: string
    /** Migration 0006: stored lower-cased; UNIQUE. */
    username: string | null
    nickname: string | null
    bio: string | null
    role: ColumnType<string, string | undefined, string>
    /** 'active' or 'disabled'. */
    status: ColumnType<string, string | undefined, string>
    /**
     * ISO 8601 UTC with milliseconds, like created_at. Required: PostgreSQL has no default for it (SQLite's and
     * MySQL's '' is only what the migration's UPDATE replaces).
     */
    updated_at: string
  }
  /** Migration 0006: an account's avatar (AvatarStore), one row per account. */
  avatars: {
    user_id: string
    /** 32 lowercase hexadecimal digits; UNIQUE. */
    id: string
    content_type: string
    data: Buffer
    created_at: EpochMs
  }
  /** Migration 0006: links to provider accounts (ProviderLinkStore), by (provider, subject). */
  oauth_accounts: {
    provider: string
    subject: string
    user_id: string
    email: string | null
    created_at: EpochMs
  }
  /** Migration 0006: one-time tickets (TicketStore), by the digest of their secret. */
  oauth_tickets: {
    digest: string
    kind: string
    payload: string
    expires_at: EpochMs
  }
  /** Migration 0009: an account's second factors (FactorStore), by a random id. */
  mfa_factors: {
    /** 32 lowercase hexadecimal digits. */
    id: string
    user_id: string
    /** 'totp' or 'passkey'. */
    type: string
    name: string
    /** A BOOLEAN in PostgreSQL and MySQL (there 0 or 1), 0 or 1 in SQLite. */
    confirmed: ColumnType<boolean | number, boolean | number, boolean | number>
    /** TOTP: the sealed secret; NULL for a passkey. */
    secret: string | null
    last_step: ColumnType<number | string | null, number | null, number | null>
    /** Passkey: the credential id (base64url); NULL for TOTP. */
    credential_id: string | null
    /** SHA-256 hex of credential_id: UNIQUE (the credential id is too long for MySQL's indexes). */
    credential_digest: string | null
    public_key: string | null
    /** A BIGINT: PostgreSQL returns it as a string. */
    counter: ColumnType<number | string, number | undefined, number>
    backed_up: ColumnType<boolean | number, boolean | number, boolean | number>
    /** A JSON array of the transports' names. */
    transports: string
    created_at: EpochMs
    last_used_at: ColumnType<number | string | null, number | null, number | null>
  }
  /** Migration 0009: an account's unused recovery codes (FactorStore), by (user_id, keyed digest). */
  mfa_recovery_codes: {
    user_id: string
    digest: string
  }
  /** Migration 0009: the service's sealed keys (ServiceKeyStore), by name. */
  service_keys: {
    name: string
    value: string
  }
  /** Migrations 0004, 0010: one row per session (StoredSession), replacing the refresh_tokens of 0001. */
  sessions: {
    /** 32 lowercase hexadecimal digits. */
    id: string
    user_id: string
    /** 'single' for a session started with the `single` limit, the session's id otherwise: UNIQUE (user_id, slot). */
    slot: string
    /** SHA-256 hex of the current token. */
    token_digest: string
    expires_at: EpochMs
    created_at: EpochMs
    last_used_at: EpochMs
    device: string
    client_address: string | null
    previous_digest: string | null
    rotated_at: ColumnType<number | string | null, number | null, number | null>
    /** Migration 0010: whether the session was established with a second factor (StoredSession.secondFactor). */
    second_factor: ColumnType<boolean | number, boolean | number | undefined, boolean | number>
  }
  /** Migrations 0005, 0007: one-time e-mail codes (EmailCodeStore), one row per (address, purpose, user_id). */
  email_codes: {
    address: string
    purpose: string
    /** The account that asked for the codes; '' for none. */
    user_id: string
    /** The key's codes, their keyed digests with their expiries and tries (mail-rows.ts, encodeCodes). */
    codes: string
    /** When the last of the codes expires. */
    expires_at: EpochMs
  }
  /** Migration 0005: mail waiting to be delivered (OutboxStore). */
  outbox: {
    /** 32 lowercase hexadecimal digits. */
    id: string
    user_id: string | null
    recipient: string
    /** The sealed mail (at most 8 KiB of ASCII) or the event's JSON body (at most 32 KiB). */
    payload: string
    created_at: EpochMs
    attempts: ColumnType<number, number | undefined, number>
    next_attempt_at: EpochMs
    /** The random value of the claim that holds the message, or null. */
    claimant: string | null
    /** Epoch milliseconds: until when the claimant holds it; 0 when nobody does. */
    lease_until: ColumnType<number | string, number | undefined, number>
    /** Migration 0008: the expiry of the code the message carries (epoch milliseconds); null when it is no code. */
    code_expires_at: ColumnType<number | string | null, number | null | undefined, number | null>
    /** Migration 0012: the message's lane, `mail` or `webhook` (OutboxLane). */
    lane: ColumnType<string, string | undefined, string>
  }
  /** Migration 0012: the webhook URLs disabled by a 410 (WebhookUrlStore), by the SHA-256 of each. */
  webhook_disabled_urls: {
    url_digest: string
    disabled_at: EpochMs
  }
  /** Migration 0005: hit counters in fixed windows (RateCounterStore) of a store without Redis. */
  rate_counters: {
    counter_key: string
    window_ends: EpochMs
    hits: number
  }
}
