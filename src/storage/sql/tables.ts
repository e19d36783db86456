import type { ColumnType } from 'kysely'

/** Epoch milliseconds in a BIGINT column: PostgreSQL returns it as a string. */
type EpochMs = ColumnType<number | string, number, number>

/** The tables of migrations/<engine>/, as Kysely sees them. */
export interface Tables {
  users: {
    id: string
    email: string
    password_hash: string
    /** ISO 8601 UTC with milliseconds: the value the API returns, identical in every engine. */
    created_at: string
  }
  /** Migration 0004: one row per session (StoredSession), replacing the refresh_tokens of 0001. */
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
  }
}
