import type { UserRecord } from '../stores.js'

/**
 * The columns of `users` that hold a UserRecord, in the order of every SELECT (migration 0005 added
 * email_verified). Five short values: login and GET /auth/me read them on the hot path, so nothing wider joins them.
 */
export const USER_COLUMNS = 'id, email, password_hash, email_verified, created_at'

/** What password_hash holds for an account without a usable password (UserRecord.passwordHash null): NOT NULL. */
const NO_PASSWORD = ''

/** The password_hash column's value for `passwordHash`. */
export function storedPasswordHash(passwordHash: string | null): string {
  return passwordHash ?? NO_PASSWORD
}

/** The values of a user's row, in USER_COLUMNS order; the flag as 1 or 0 (SQLite binds no boolean). */
export function userValues(user: UserRecord): unknown[] {
  return [
    user.id,
    user.email,
    storedPasswordHash(user.passwordHash),
    user.emailVerified ? 1 : 0,
    user.createdAt,
  ]
}

/** A row of USER_COLUMNS as a driver returns it: the flag is a boolean from PostgreSQL, 0 or 1 from the others. */
export function toUser(row: Record<string, unknown>): UserRecord {
  const passwordHash = row.password_hash as string
  return {
    id: row.id as string,
    email: row.email as string,
    passwordHash: passwordHash === NO_PASSWORD ? null : passwordHash,
    emailVerified: row.email_verified === true || row.email_verified === 1,
    createdAt: row.created_at as string,
  }
}
