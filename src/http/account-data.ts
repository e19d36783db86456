import type { Account, Session } from '../auth/account.js'
import { isChallenge, type SignIn } from '../auth/session-starter.js'

/** The path of an avatar (GET /avatars/<id>) under BASE_PATH, relative to the service's origin (docs/api.md §4.23). */
export function avatarPath(basePath: string, avatarId: string): string {
  return `${basePath}/avatars/${avatarId}`
}

/** The account as every answer shows it (docs/api.md §2.1): unset values are null. */
export function accountData(account: Account, basePath: string) {
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

/** A login answer (spec 4.4, and every way of logging in beside it): the account and the new token pair. */
export function loginData({ account, tokens }: Session, basePath: string) {
  return {
    ...accountData(account, basePath),
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken,
  }
}

/**
 * The answer of a first factor (docs/api.md §4.25): a login answer, or for an account with a second factor its
 * challenge, with no tokens.
 */
export function signInData(outcome: SignIn, basePath: string) {
  if (!isChallenge(outcome)) return loginData(outcome, basePath)
  return { mfa_required: true as const, mfa_ticket: outcome.mfaTicket, factors: [...outcome.factors] }
}
