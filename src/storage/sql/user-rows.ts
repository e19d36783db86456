import type { AccountStatus, UserRecord } from '../stores.js'

/**
 * The columns of `users` that hold a UserRecord, in the order of every SELECT and of insertUser's values (migration
 * 0005 added email_verified, 0006 the profile, role, status and updated_at). The avatar and the providers are read
 * beside them (userSelectList), never written through the user store.
 */
export const USER_COLUMNS =
  'id, email, password_hash, email_verified, created_at, username, nickname, bio, role, status, updated_at'

/** The `?` placeholders of insertUser's VALUES, one per column of USER_COLUMNS. */
export const USER_PLACEHOLDERS = USER_COLUMNS.split(', ')
  .map(() => '?')
  .join(', ')

/**
 * What a read of an account selects: USER_COLUMNS, then its avatar's id and its providers' names joined by commas
 * (in any order: toUser sorts them), each read by a scalar subquery on a primary or unique key (avatars.user_id,
 * oauth_accounts (user_id, provider)). Login and GET /auth/me read the account on their hot path: one statement, one round trip, however many
 * tables the account spans. `providers` is the engine's aggregate over the account's oauth_accounts rows (its own SQL
 * in each engine: group_concat, string_agg, GROUP_CONCAT), correlated with `users.id`.
 */
export function userSelectList(providers: string): string {
  return `${USER_COLUMNS},
    (SELECT avatars.id FROM avatars WHERE avatars.user_id = users.id) AS avatar_id,
    (${providers}) AS providers`
}

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
    user.username,
    user.nickname,
    user.bio,
    user.role,
    user.status,
    user.updatedAt,
  ]
}

/**
 * A row of userSelectList as a driver returns it: the flag is a boolean from PostgreSQL, 0 or 1 from the others;
 * `providers` is null (or '') for an account without any.
 */
export function toUser(row: Record<string, unknown>): UserRecord {
  const passwordHash = row.password_hash as string
  const providers = row.providers as string | null
  return {
    id: row.id as string,
    email: row.email as string,
    passwordHash: passwordHash === NO_PASSWORD ? null : passwordHash,
    emailVerified: row.email_verified === true || row.email_verified === 1,
    createdAt: row.created_at as string,
    username: row.username as string | null,
    nickname: row.nickname as string | null,
    bio: row.bio as string | null,
    avatarId: row.avatar_id as string | null,
    role: row.role as string,
    status: row.status as AccountStatus,
    updatedAt: row.updated_at as string,
    providers: providers ? providers.split(',').sort() : [],
  }
}

/**
 * The range of the byte order that holds the texts starting with `prefix`: from the prefix itself to the prefix with
 * its last character one higher (a text that starts with the prefix sorts within it, any other outside). Null for a
 * prefix with a character outside printable ASCII (a space included), which no e-mail address (R2.1.2) or username
 * (R2.1.8) has: no account starts with it.
 */
export function prefixRange(prefix: string): { from: string; to: string } | null {
  if (!/^[\x21-\x7e]+$/.test(prefix)) return null
  const last = prefix.charCodeAt(prefix.length - 1)
  return { from: prefix, to: `${prefix.slice(0, -1)}${String.fromCharCode(last + 1)}` }
}
