import type { Account } from './account.js'

/** The path of an avatar (GET /avatars/<id>) under BASE_PATH, relative to the service's origin (docs/api.md §4.23). */
export function avatarPath(basePath: string, avatarId: string): string {
  return `${basePath}/avatars/${avatarId}`
}

/**
 * The account as every answer shows it (docs/api.md §2.1), and as a webhook event carries it (§6.5): unset values
 * are null; never a password hash, a code or a token.
 */
export function accountView(account: Account, basePath: string) {
  return {
    id: account.id,
    email: account.email,
    email_verified: account.emailVerified,
    username: account.username,
    nickname: account.nickname,
    avatar_url: account.avatarId === null ? null : avatarPath(basePath, account.avatarId),
    bio: account.bio,
    role: account.role,
    status: account.status,
    password_set: account.passwordSet,
    providers: [...account.providers],
    created_at: account.createdAt,
    updated_at: account.updatedAt,
  }
}
