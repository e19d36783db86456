import { randomBytes } from 'node:crypto'
import { coarseNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import type { SessionConfig } from '../config/session-config.js'
import { InvalidCredentialsError } from '../errors.js'
import type { RequestContext } from '../security-event.js'
import { describeDevice } from '../sessions/device.js'
import type { SessionStore, UserRecord } from '../storage/stores.js'
import type { Account, Session } from './account.js'
import { refreshTokenDigest, type TokenService } from './token-service.js'

export interface SessionStarterDeps {
  sessions: SessionStore
  tokens: TokenService
  /** AUTH_SESSIONS, AUTH_MAX_SESSIONS, and whether tokens carry sid. */
  sessionConfig: SessionConfig
  clock: Clock
}

/** Starts a session for an account that just proved who it is, and answers it with its token pair. */
export type StartSession = (user: UserRecord, context: RequestContext) => Promise<Session>

/**
 * spec 3: a new session and its token pair, for every way of logging in (password, code, reset, change). In single
 * mode it replaces the user's session (the specification's one current refresh token); per device it is one more,
 * the least recently used ended beyond AUTH_MAX_SESSIONS. Throws InvalidCredentialsError when the account was
 * deleted since it was read (`tessera users delete`, POST /auth/delete): as if it had not been found.
 */
export function createSessionStarter(deps: SessionStarterDeps): StartSession {
  const { sessions, tokens, sessionConfig, clock } = deps
  const sessionLimit = sessionConfig.mode === 'single' ? 'single' : sessionConfig.maxSessions
  return async (user, context) => {
    const id = randomBytes(16).toString('hex')
    const pair = tokens.issuePair(user.id, {
      access: sessionConfig.sidInAccessTokens ? id : null,
      refresh: sessionConfig.sidInRefreshTokens ? id : null,
    })
    const now = clock.now()
    const stored = await sessions.start(
      {
        id,
        userId: user.id,
        digest: refreshTokenDigest(pair.refreshToken),
        expiresAt: pair.refreshExpiresAt,
        createdAt: now,
        lastUsedAt: now,
        device: describeDevice(context.userAgent),
        clientAddress: context.clientAddress === null ? null : coarseNetwork(context.clientAddress),
        previousDigest: null,
        rotatedAt: null,
      },
      sessionLimit,
      now,
    )
    if (!stored) throw new InvalidCredentialsError()
    return {
      account: toAccount(user),
      tokens: { accessToken: pair.accessToken, refreshToken: pair.refreshToken },
      sessionId: id,
    }
  }
}

/** The account as the API shows it. */
export function toAccount(user: UserRecord): Account {
  return { id: user.id, email: user.email, emailVerified: user.emailVerified, createdAt: user.createdAt }
}
