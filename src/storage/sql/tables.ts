import type { ColumnType } from 'kysely'

/** The tables of migrations/<engine>/, as Kysely sees them. */
export interface Tables {
  users: {
    id: string
    email: string
    password_hash: string
    /** ISO 8601 UTC with milliseconds: the value the API returns, identical in every engine. */
    created_at: string
  }
  refresh_tokens: {
    user_id: string
    /** SHA-256 hex of the token. */
    token_digest: string
    /** Epoch milliseconds (BIGINT; PostgreSQL returns it as a string). */
    expires_at: ColumnType<number | string, number, number>
  }
}
