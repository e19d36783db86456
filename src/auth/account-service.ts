import { clientNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import {
  AccessTokenInvalidError,
  EmailTakenError,
  InvalidCredentialsError,
  RateLimitedError,
  RefreshTokenInvalidError,
  ServiceBusyError,
  StorageError,
  ValidationError,
} from '../errors.js'
import type {
  RequestContext,
  SecurityEventReason,
  SecurityEventSink,
  SecurityEventType,
} from '../security-event.js'
import type { RefreshTokenStore, UserRecord, UserStore } from '../storage/stores.js'
import { normalizeEmail } from './email.js'
import type { LoginThrottle } from './login-throttle.js'
import type { PasswordHasher } from './password-hasher.js'
import { newPasswordProblem } from './password-policy.js'
import { createReuseMemory } from './reuse-memory.js'
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

/** A login always has a client: the throttle counts its failures by the client's address (docs/api.md R8.4). */
export type LoginContext = RequestContext & { clientAddress: string }

/**
 * Each method that changes a session takes `context`, whom the call is for (the HTTP request it serves, or nulls
 * off HTTP): the client address is read from there only, and the method's security event (docs/api.md "Audit
 * events") names the context's address and request id.
 */
export interface AccountService {
  /**
   * spec 4.3: creates the account and logs it in. Throws ValidationError, EmailTakenError. The context's address,
   * when there is one, is the Argon2 requester (R8.2) and is remembered for the account (R8.6).
   */
  register(input: { email: string; password: string }, context: RequestContext): Promise<Session>
  /**
   * spec 4.4: throws InvalidCredentialsError for a wrong e-mail or password alike, RateLimitedError when the
   * throttle refuses the attempt (docs/api.md R8.4, R8.5), and StorageError, whatever the password, when a store
   * the login needs fails (R4.4.5). The context's address is what the throttle counts and the Argon2 requester.
   */
  login(input: { email: string; password: string }, context: LoginContext): Promise<Session>
  /** spec 4.5: rotates the refresh token. Throws RefreshTokenInvalidError, TokenWrongTypeError. */
  refresh(refreshToken: string, context: RequestContext): Promise<Session['tokens']>
  /** spec 4.6: deletes the user's stored refresh token. */
  logout(userId: string, context: RequestContext): Promise<void>
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
  /** docs/api.md R8.4 to R8.6. */
  throttle: LoginThrottle
  /** Where the security events go (the audit trail and the log); never makes a call wait. */
  events: SecurityEventSink
}

/** Attempts at drawing an unused random id; with 9·10⁹ ids a second attempt is already rare. */
const ID_ATTEMPTS = 5
/** Refresh tokens whose reuse is remembered (64 hexadecimal digits each: about a megabyte). */
const REUSES_REMEMBERED = 10_000

export function createAccountService(deps: AccountServiceDeps): AccountService {
  const { users, refreshTokens, hasher, tokens, clock, log, throttle, events } = deps
  const record = (
    type: SecurityEventType,
    userId: string | null,
    context: RequestContext,
    reason: SecurityEventReason | null = null,
  ) =>
    events.record({
      at: clock.now(),
      type,
      userId,
      clientAddress: context.clientAddress,
      requestId: context.requestId,
      reason,
    })
  /**
   * docs/api.md R4.4.5: set when a store failed during a login, cleared when a login completes (its session was
   * stored). While set, a wrong password gets the answer of a failing store, not 401, so that a right password
   * (whose session could not be stored) and a wrong one cannot be told apart by their status.
   */
  let storesFailing = false
  const reuses = createReuseMemory(REUSES_REMEMBERED)
  /** Any failure of a store during a login, as one StorageError: the answer does not depend on which store failed. */
  const loginStoreFailure = (cause: unknown): StorageError => {
    storesFailing = true
    return new StorageError('login could not complete: a store failed', { cause })
  }

  /** spec 3: a new token pair whose refresh token replaces any stored one. */
  const startSession = async (user: UserRecord): Promise<Session> => {
    const pair = tokens.issuePair(user.id)
    const stored = await refreshTokens.put(user.id, {
      digest: refreshTokenDigest(pair.refreshToken),
      expiresAt: pair.refreshExpiresAt,
    })
    // the account was deleted since it was read (tessera users delete): as if it had not been found
    if (!stored) throw new InvalidCredentialsError()
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

  /**
   * docs/api.md R7.2: a registration is all or nothing. The account was written and its session could not be
   * stored: the account is deleted again before the answer, which then says that nothing was made (a 500; the
   * refresh token, if a store whose answer was lost did keep it, was sent to nobody and names no account). When the
   * deletion cannot be confirmed either, the account may exist: 503 write_outcome_unknown, and a retry answers 200 or
   * 409. The `registered` event is recorded only once the session is stored, so an undone account leaves none.
   */
  const undoRegistration = async (user: UserRecord, failure: unknown): Promise<never> => {
    try {
      await users.delete(user.id)
    } catch (error) {
      throw new StorageError('registration neither completed nor undone: the account may exist', {
        cause: new AggregateError([failure, error]),
        outcomeUnknown: true,
      })
    }
    log.warn(
      { event: 'registration_undone', userId: user.id },
      'registration undone: its session could not be stored',
    )
    if (failure instanceof StorageError && failure.outcomeUnknown) {
      throw new StorageError('registration undone: its session could not be stored', { cause: failure })
    }
    throw failure
  }

  return {
    async register(input, context) {
      const email = normalizeEmail(input.email)
      if (email === null)
        throw new ValidationError([{ field: '/email', message: 'must be a valid e-mail address' }])
      // the service is also called without HTTP: it applies the policy itself, with the message the schema gives
      const passwordProblem = newPasswordProblem(input.password)
      if (passwordProblem !== null)
        throw new ValidationError([{ field: '/password', message: passwordProblem }])
      // the 409 reveals a registered e-mail by design (spec 4.3); checking first spares an Argon2 hash
      if (await users.findByEmail(email)) throw new EmailTakenError()
      const address = context.clientAddress === null ? undefined : clientNetwork(context.clientAddress)
      const user = await createUser(email, await hasher.hash(input.password, address))
      let session: Session
      try {
        session = await startSession(user)
      } catch (error) {
        return undoRegistration(user, error)
      }
      record('registered', user.id, context)
      // the address that chose the password is one its owner uses (R8.6)
      if (address !== undefined) await throttle.remember(email, address)
      return session
    },

    async login(input, context) {
      const email = normalizeEmail(input.email)
      const address = clientNetwork(context.clientAddress)
      const failed = (reason: SecurityEventReason, userId: string | null = null) =>
        record('login_failed', userId, context, reason)
      // R8.4, R8.5: refused before any Argon2 work; an address no account can have is throttled as typed
      const pass = await throttle
        .admit(email ?? input.email.trim().toLowerCase(), address)
        .catch((error: unknown) => {
          // the account is not looked up for a refused attempt (that is what makes refusing cheap): no user id
          if (error instanceof RateLimitedError) failed('throttled')
          throw error
        })
      if (pass.degraded) throw loginStoreFailure(new Error('the login-attempt store failed'))
      let user: UserRecord | null
      try {
        user = email === null ? null : await users.findByEmail(email)
      } catch (error) {
        if (!(error instanceof StorageError)) throw error
        throw loginStoreFailure(error)
      }
      if (user === null) {
        await hasher.verifyDummy(input.password, address)
        log.warn(
          {
            event: 'login_failed',
            reason: 'unknown_email',
            clientAddress: context.clientAddress,
            ...requestIdField(context),
          },
          'login failed',
        )
        failed('unknown_email')
        await throttle.failed(pass)
        if (storesFailing) throw loginStoreFailure(new Error('a store failed during the login'))
        throw new InvalidCredentialsError()
      }
      // an address the owner has logged in from (R8.6) waits ahead of a flood from others (R8.2)
      if (!(await hasher.verify(user.passwordHash, input.password, address, pass.remembered))) {
        // spec 4.4 rule 3
        log.warn(
          {
            event: 'login_failed',
            reason: 'wrong_password',
            userId: user.id,
            clientAddress: context.clientAddress,
            ...requestIdField(context),
          },
          'login failed',
        )
        failed('wrong_password', user.id)
        await throttle.failed(pass)
        if (storesFailing) throw loginStoreFailure(new Error('a store failed during the login'))
        throw new InvalidCredentialsError()
      }
      let session: Session
      try {
        if (hasher.needsRehash(user.passwordHash)) {
          // a busy queue skips the re-hash until a later login: a 503 here would answer a right password only
          const rehashed = await hasher.hash(input.password, address).catch((error: unknown) => {
            if (error instanceof ServiceBusyError) return null
            throw error
          })
          if (rehashed !== null) await users.updatePasswordHash(user.id, rehashed)
        }
        session = await startSession(user)
      } catch (error) {
        if (!(error instanceof StorageError)) throw error
        throw loginStoreFailure(error)
      }
      storesFailing = false
      record('login_succeeded', user.id, context)
      await throttle.succeeded(pass)
      return session
    },

    async refresh(refreshToken, context) {
      let userId: string
      try {
        userId = tokens.verifyRefresh(refreshToken)
      } catch (error) {
        // a bad signature, an expired, malformed or access token: whose it claims to be is not believed
        record('refresh_refused', null, context, 'invalid')
        throw error
      }
      // docs/api.md R4.5.3, R4.7.2: a token whose sub names no account is refused. The rotation below sees to it: a stored token
      // implies its account (a foreign key in SQL; in Redis, `tessera users delete` retires the user's token before
      // it deletes the account, and a retired user gets no new one), so a valid token of no account finds nothing to
      // rotate, and no account read is added to the refresh.
      const pair = tokens.issuePair(userId)
      const digest = refreshTokenDigest(refreshToken)
      const rotated = await refreshTokens.rotate(
        userId,
        digest,
        { digest: refreshTokenDigest(pair.refreshToken), expiresAt: pair.refreshExpiresAt },
        clock.now(),
      )
      // spec 4.5 rule 3: a token already rotated (or replaced by a login, or deleted) is refused
      if (!rotated) {
        // the first reuse of a token is an event of its account; a client replaying it again is a flood (R6.3.4)
        record('refresh_refused', userId, context, reuses.isFirstReuse(digest) ? 'reused' : 'replayed')
        throw new RefreshTokenInvalidError()
      }
      record('refresh_succeeded', userId, context)
      return { accessToken: pair.accessToken, refreshToken: pair.refreshToken }
    },

    async logout(userId, context) {
      await refreshTokens.delete(userId)
      record('logout', userId, context)
    },

    async me(userId) {
      const user = await users.findById(userId)
      if (user === null) throw new AccessTokenInvalidError()
      return toAccount(user)
    },
  }
}

/** The request id under the name the request log gives it, so that the lines of one request can be found. */
function requestIdField(context: RequestContext): { reqId?: string } {
  return context.requestId === null ? {} : { reqId: context.requestId }
}

function toAccount(user: UserRecord): Account {
  return { id: user.id, email: user.email, createdAt: user.createdAt }
}
