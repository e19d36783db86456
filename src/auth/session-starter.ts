import { randomBytes } from 'node:crypto'
import { coarseNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import type { SessionConfig } from '../config/session-config.js'
import { InvalidCredentialsError } from '../errors.js'
import type { RequestContext } from '../security-event.js'
import { describeDevice } from '../sessions/device.js'
import type { SessionStore, UserRecord, UserStore } from '../storage/stores.js'
import { type Session, toAccount } from './account.js'
import { refreshTokenDigest, type TokenService } from './token-service.js'

export interface SessionStarterDeps {
  sessions: SessionStore
  /** Read again once the session is stored: an account disabled meanwhile keeps no session (docs/api.md §2.1). */
  users: Pick<UserStore, 'findById'>
  tokens: TokenService
  /** AUTH_SESSIONS, AUTH_MAX_SESSIONS, AUTH_SESSION_LIFETIME_DAYS, and whether tokens carry sid. */
  sessionConfig: SessionConfig
  clock: Clock
}

/** How a session starts beside its account. */
export interface SessionStart {
  /**
   * Established with a second factor (docs/api.md §4.25): a sign-in completed by POST /auth/mfa/verify or a passkey,
   * or a password change by a session that was. What removing a factor asks of the live session.
   */
  secondFactor?: boolean
}

/** Starts a session for an account that just proved who it is, and answers it with its token pair. */
export type StartSession = (
  user: UserRecord,
  context: RequestContext,
  start?: SessionStart,
) => Promise<Session>

/** How an account proved itself before a second factor is asked for (docs/api.md §4.25). */
export type FirstFactor = 'password' | 'email_code' | 'provider' | 'reset'

/** The kinds of proof that complete a second-factor challenge. */
export type SecondFactorKind = 'totp' | 'passkey' | 'recovery_code'

/**
 * docs/api.md §4.25: what a first factor alone answers for an account with a confirmed second factor, instead of a
 * session: a one-time ticket for POST /auth/mfa/verify (or a passkey), and the kinds of proof the account can give.
 */
export interface SecondFactorChallenge {
  mfaTicket: string
  factors: readonly SecondFactorKind[]
}

/** A sign-in's outcome: a session, or, for an account with a second factor, the challenge that completes it. */
export type SignIn = Session | SecondFactorChallenge

export const isChallenge = (outcome: SignIn): outcome is SecondFactorChallenge => 'mfaTicket' in outcome

/**
 * The second step (mfa/mfa-service.ts): null when the account has no confirmed factor, so the first factor suffices
 * and the caller starts the session; else the challenge, stored as a ticket bound to the account and `firstFactor`.
 * `login` is the password login's throttle pass (R8.5, R8.6), settled only when the second step passes.
 */
export type SecondStepGate = (
  user: UserRecord,
  context: RequestContext,
  firstFactor: FirstFactor,
  login?: { email: string; address: string; remembered: boolean },
) => Promise<SecondFactorChallenge | null>

/**
 * spec 3: a new session and its token pair, for every way of logging in (password, code, reset, change, provider).
 * In single mode it replaces the user's session (the specification's one current refresh token); per device it is
 * one more, the least recently used ended beyond AUTH_MAX_SESSIONS. With AUTH_SESSION_LIFETIME_DAYS, the session is
 * stored to expire at its end if its refresh token would outlive it (R3.16). The tokens carry the account's role when
 * it is not `user` (docs/api.md §2.3). Throws InvalidCredentialsError when the account is disabled, or was deleted
 * or disabled since it was read (`tessera users delete|disable`, POST /auth/delete): as if it had not been found.
 */
export function createSessionStarter(deps: SessionStarterDeps): StartSession {
  const { sessions, users, tokens, sessionConfig, clock } = deps
  const sessionLimit = sessionConfig.mode === 'single' ? 'single' : sessionConfig.maxSessions
  const { lifetimeMs } = sessionConfig
  const start = async (
    user: UserRecord,
    context: RequestContext,
    options: SessionStart,
    again: boolean,
  ): Promise<Session> => {
    if (user.status !== 'active') throw new InvalidCredentialsError()
    const id = randomBytes(16).toString('hex')
    const pair = tokens.issuePair(
      user.id,
      { id, inAccess: sessionConfig.sidInAccessTokens, inRefresh: sessionConfig.sidInRefreshTokens },
      user.role,
    )
    const now = clock.now()
    // the token's own exp stays its lifetime after its iat (R5.5.5): the stored session is what ends earlier
    const expiresAt =
      lifetimeMs === null ? pair.refreshExpiresAt : Math.min(pair.refreshExpiresAt, now + lifetimeMs)
    const stored = await sessions.start(
      {
        id,
        userId: user.id,
        digest: refreshTokenDigest(pair.refreshToken),
        expiresAt,
        createdAt: now,
        lastUsedAt: now,
        device: describeDevice(context.userAgent),
        clientAddress: context.clientAddress === null ? null : coarseNetwork(context.clientAddress),
        previousDigest: null,
        rotatedAt: null,
        secondFactor: options.secondFactor === true,
      },
      sessionLimit,
      now,
    )
    if (!stored) throw new InvalidCredentialsError()
    // `tessera users disable` and `set-role` set the status or role, then end the sessions: either that end saw this
    // session, or this read sees the change, and the session is ended here (and started again with the new role)
    const current = await users.findById(user.id)
    if (current === null || current.status !== 'active' || current.role !== user.role) {
      await sessions.end(user.id, id, clock.now())
      if (current === null || current.status !== 'active' || again) throw new InvalidCredentialsError()
      return start(current, context, options, true)
    }
    return {
      account: toAccount(current),
      tokens: { accessToken: pair.accessToken, refreshToken: pair.refreshToken },
      sessionId: id,
    }
  }
  return (user, context, options = {}) => start(user, context, options, false)
}
