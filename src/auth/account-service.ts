import type { Clock } from '../clock.js'
import {
  AccessTokenInvalidError,
  EmailTakenError,
  InvalidCredentialsError,
  RefreshTokenInvalidError,
  ValidationError,
} from '../errors.js'
import type { RefreshTokenStore, UserRecord, UserStore } from '../storage/stores.js'
import { normalizeEmail } from './email.js'
import type { PasswordHasher } from './password-hasher.js'
import { newPasswordProblem } from './password-policy.js'
import { refreshTokenDigest, type TokenPair, type TokenService } from './token-service.js'
import { generateUserId } from './user-id.js'

/** The account as the API shows it: never the password hash. */
export interface Account {
  id: string
  email: string
  createdAt: string
}

export interface Session {
  account: Account
  tokens: Pick<TokenPair, 'accessToken' | 'refreshToken'>
}

/** The slice of a logger the service writes security events to (pino-compatible). */
export interface SecurityLog {
  warn(fields: Record<string, unknown>, message: string): void
}

export interface AccountService {
  /** spec 4.3: creates the account and logs it in. Throws ValidationError, EmailTakenError. */
  register(input: { email: string; password: string }): Promise<Session>
  /** spec 4.4: throws InvalidCredentialsError for a wrong e-mail or password alike. */
  login(input: { email: string; password: string; clientAddress: string }): Promise<Session>
  /** spec 4.5: rotates the refresh token. Throws RefreshTokenInvalidError, TokenWrongTypeError. */
  refresh(refreshToken: string): Promise<Session['tokens']>
  /** spec 4.6: deletes the user's stored refresh token. */
  logout(userId: string): Promise<void>
  /** GET /auth/me (docs/api.md §4.7). Throws AccessTokenInvalidError when the account no longer exists. */
  me(userId: string): Promise<Account>
}

export interface AccountServiceDeps {
  users: UserStore
  refreshTokens: RefreshTokenStore
  hasher: PasswordHasher
  tokens: TokenService
  clock: Clock
  log: SecurityLog
}

/** Attempts at drawing an unused random id; with 9·10⁹ ids a second attempt is already rare. */
const ID_ATTEMPTS = 5

export function createAccountService(deps: AccountServiceDeps): AccountService {
  const { users, refreshTokens, hasher, tokens, clock, log } = deps

  /** spec 3: a new token pair whose refresh token replaces any stored one. */
  const startSession = async (user: UserRecord): Promise<Session> => {
    const pair = tokens.issuePair(user.id)
    await refreshTokens.put(user.id, {
      digest: refreshTokenDigest(pair.refreshToken),
      expiresAt: pair.refreshExpiresAt,
    })
    return {
      account: toAccount(user),
      tokens: { accessToken: pair.accessToken, refreshToken: pair.refreshToken },
    }
  }

  const createUser = async (email: string, passwordHash: string): Promise<UserRecord> => {
    const createdAt = new Date(clock.now()).toISOString()
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const user = { id: generateUserId(), email, passwordHash, createdAt }
      const result = await users.create(user)
      if (result === 'created') return user
      if (result === 'email_taken') throw new EmailTakenError()
    }
    throw new Error(`no free user id after ${ID_ATTEMPTS} attempts`)
  }

  return {
    async register(input) {
      const email = normalizeEmail(input.email)
      if (email === null)
        throw new ValidationError([{ field: '/email', message: 'must be a valid e-mail address' }])
      // the service is also called without HTTP: it applies the policy itself, with the message the schema gives
      const passwordProblem = newPasswordProblem(input.password)
      if (passwordProblem !== null)
        throw new ValidationError([{ field: '/password', message: passwordProblem }])
      // the 409 reveals a registered e-mail by design (spec 4.3); checking first spares an Argon2 hash
      if (await users.findByEmail(email)) throw new EmailTakenError()
      const user = await createUser(email, await hasher.hash(input.password))
      return startSession(user)
    },

    async login(input) {
      const email = normalizeEmail(input.email)
      const user = email === null ? null : await users.findByEmail(email)
      if (user === null) {
        await hasher.verifyDummy(input.password)
        log.warn(
          { event: 'login_failed', reason: 'unknown_email', clientAddress: input.clientAddress },
          'login failed',
        )
        throw new InvalidCredentialsError()
      }
      if (!(await hasher.verify(user.passwordHash, input.password))) {
        // spec 4.4 rule 3
        log.warn(
          {
            event: 'login_failed',
            reason: 'wrong_password',
            userId: user.id,
            clientAddress: input.clientAddress,
          },
          'login failed',
        )
        throw new InvalidCredentialsError()
      }
      if (hasher.needsRehash(user.passwordHash)) {
        await users.updatePasswordHash(user.id, await hasher.hash(input.password))
      }
      return startSession(user)
    },

    async refresh(refreshToken) {
      const userId = tokens.verifyRefresh(refreshToken)
      // docs/api.md R4.5.3, R4.7.2: a token whose sub names no account is refused. The rotation below sees to it: a stored token
      // implies its account (a foreign key in SQL; in Redis, tokens are stored only for accounts that exist, and
      // the service deletes no account), so a valid token of no account finds nothing to rotate.
      const pair = tokens.issuePair(userId)
      const rotated = await refreshTokens.rotate(
        userId,
        refreshTokenDigest(refreshToken),
        { digest: refreshTokenDigest(pair.refreshToken), expiresAt: pair.refreshExpiresAt },
        clock.now(),
      )
      // spec 4.5 rule 3: a token already rotated (or replaced by a login, or deleted) is refused
      if (!rotated) throw new RefreshTokenInvalidError()
      return { accessToken: pair.accessToken, refreshToken: pair.refreshToken }
    },

    async logout(userId) {
      await refreshTokens.delete(userId)
    },

    async me(userId) {
      const user = await users.findById(userId)
      if (user === null) throw new AccessTokenInvalidError()
      return toAccount(user)
    },
  }
}

function toAccount(user: UserRecord): Account {
  return { id: user.id, email: user.email, createdAt: user.createdAt }
}
