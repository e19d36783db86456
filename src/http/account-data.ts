import type { Session } from '../auth/account.js'
import { accountView } from '../auth/account-view.js'
import { isChallenge, type SignIn } from '../auth/session-starter.js'

/** The account as every answer shows it (docs/api.md §2.1): unset values are null. */
export const accountData = accountView

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
