import { clientNetwork, coarseNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import type { RegisterCodeMode } from '../config/mail-config.js'
import type { SessionConfig } from '../config/session-config.js'
import {
  AccessTokenInvalidError,
  CodeRefusedError,
  EmailTakenError,
  InvalidCredentialsError,
  RateLimitedError,
  RefreshTokenInvalidError,
  ServiceBusyError,
  StorageError,
  ValidationError,
} from '../errors.js'
import { message } from '../language/message.js'
import {
  type RequestContext,
  type SecurityEventReason,
  type SecurityEventSink,
  securityEventRecorder,
} from '../security-event.js'
import { sessionTag } from '../sessions/session-tag.js'
import { newUserRecord } from '../storage/new-user.js'
import type { SessionStore, StoredSession, UserRecord, UserStore } from '../storage/stores.js'
import type { Account, Session } from './account.js'
import { toAccount } from './account.js'
import type { AccountEventPublisher } from './account-events.js'
import { normalizeEmail } from './email.js'
import type { EmailCodes } from './email-codes.js'
import type { LoginThrottle } from './login-throttle.js'
import { type PasswordHasher, verifyAccountPassword } from './password-hasher.js'
import { newPasswordProblem } from './password-policy.js'
import { createReuseMemory } from './reuse-memory.js'
import { createSessionStarter, type SecondStepGate, type SignIn } from './session-starter.js'
import { refreshTokenDigest, type TokenService, type TokenSubject } from './token-service.js'
import { generateUserId } from './user-id.js'

export type { Account, Session } from './account.js'

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
  register(
    input: { email: string; password: string; verificationCode?: string },
    context: RequestContext,
  ): Promise<Session>
  /**
   * spec 4.4: throws InvalidCredentialsError for a wrong e-mail or password alike, RateLimitedError when the
   * throttle refuses the attempt (docs/api.md R8.4, R8.5), and StorageError, whatever the password, when a store
   * the login needs fails (R4.4.5). The context's address is what the throttle counts and the Argon2 requester. An
   * account with a second factor gets its challenge instead of a session, the throttle left as a failed attempt
   * leaves it until the second step passes (docs/api.md §4.25).
   */
  login(input: { email: string; password: string }, context: LoginContext): Promise<SignIn>
  /**
   * spec 4.5: rotates the refresh token of its session. Throws RefreshTokenInvalidError, TokenWrongTypeError. With
   * a reuse grace, a token rotated within it gets the successor it already got (docs/api.md §3); with reuse
   * detection, a rotated token outside it ends its session.
   */
  refresh(refreshToken: string, context: RequestContext): Promise<Session['tokens']>
  /** GET /auth/me (docs/api.md §4.7). Throws AccessTokenInvalidError when the account no longer exists. */
  me(userId: string): Promise<Account>
}

export interface AccountServiceDeps {
  users: UserStore
  sessions: SessionStore
  /** AUTH_SESSIONS, AUTH_MAX_SESSIONS, the reuse settings and AUTH_SESSION_LIFETIME_DAYS. */
  sessionConfig: SessionConfig
  hasher: PasswordHasher
  tokens: TokenService
  clock: Clock
  log: SecurityLog
  /** docs/api.md R8.4 to R8.6. */
  throttle: LoginThrottle
  /** Where the security events go (the audit trail and the log); never makes a call wait. */
  events: SecurityEventSink
  /** Told of each session ended by reuse detection (the metric tessera_refresh_reuse_detected_total). */
  onReuseDetected?: () => void
  /**
   * The e-mail codes a registration may carry (docs/api.md §4.3, §4.14); absent, a registration with a code is
   * refused as a wrong code would be (an account service built without mail, in tests of the password flows).
   */
  emailCodes?: Pick<EmailCodes, 'take'> | null
  /** AUTH_REGISTER_CODE; `optional` when absent. */
  registerCode?: RegisterCodeMode
  /** The second step of a sign-in (docs/api.md §4.25); absent or null: a right password signs in alone. */
  secondStep?: SecondStepGate | null
  /** Where the account's webhook events go (§6.5: `user.created`, reuse detection's `session.ended`); absent, none. */
  webhooks?: Pick<AccountEventPublisher, 'publish'>
}

/** Attempts at drawing an unused random id; with 9·10⁹ ids a second attempt is already rare. */
const ID_ATTEMPTS = 5
/** Refresh tokens whose reuse is remembered (64 hexadecimal digits each: about a megabyte). */
const REUSES_REMEMBERED = 10_000

export function createAccountService(deps: AccountServiceDeps): AccountService {
  const { users, sessions, sessionConfig, hasher, tokens, clock, log, throttle, events } = deps
  const graceMs = sessionConfig.reuseGraceSeconds * 1000
  const { lifetimeMs } = sessionConfig
  /**
   * AUTH_SESSION_LIFETIME_DAYS (R3.16): whether `session` has reached its absolute lifetime at `now`. The rotation
   * refuses such a session by itself; this is for what the refresh does after a refusal, with the session in hand.
   */
  const pastLifetime = (session: StoredSession, now: number) =>
    lifetimeMs !== null && session.createdAt + lifetimeMs <= now
  const record = securityEventRecorder(events, clock)
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

  const startSession = createSessionStarter({ sessions, users, tokens, sessionConfig, clock })

  const createUser = async (
    email: string,
    passwordHash: string,
    emailVerified: boolean,
  ): Promise<UserRecord> => {
    const createdAt = new Date(clock.now()).toISOString()
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const user = newUserRecord({ id: generateUserId(), email, passwordHash, emailVerified, createdAt })
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

  /** The session a successor names: the refresh token's sid, when the configuration puts one there, and its tag. */
  const successorSubject = (
    userId: string,
    sessionId: string | null,
    tag: string | null,
    role: string | undefined,
  ): TokenSubject => {
    const subject: TokenSubject = {
      userId,
      sessionId: sessionConfig.sidInRefreshTokens ? sessionId : null,
      sessionTag: tag,
    }
    if (role !== undefined) subject.role = role
    return subject
  }
  // the refreshed token's role (docs/api.md §2.3): the one the account had at login, carried by its refresh tokens
  const accessToken = (subject: TokenSubject, sessionId: string | null) =>
    tokens.issueAccess({ ...subject, sessionId }, sessionConfig.sidInAccessTokens)

  /**
   * AUTH_REFRESH_REUSE_GRACE_SECONDS: the token of digest `digest` was rotated in `session`; presented again within
   * the grace, while the successor it got is still the session's current token, it gets that successor again (the
   * same token, recomputed: TokenService.successor is a function of the rotation) and a fresh access token. Null
   * otherwise, and once the session has reached AUTH_SESSION_LIFETIME_DAYS (R3.16): its rotation stored an expiry
   * no later than that, which `find` already respects, but an instance without the setting may have rotated it.
   */
  const withinGrace = (
    session: StoredSession,
    digest: string,
    role: string | undefined,
    now: number,
  ): Session['tokens'] | null => {
    if (graceMs === 0 || session.rotatedAt === null || now - session.rotatedAt > graceMs) return null
    if (pastLifetime(session, now)) return null
    const subject = successorSubject(session.userId, session.id, sessionTag(session.id), role)
    const next = tokens.successor(digest, subject, session.rotatedAt)
    if (refreshTokenDigest(next.token) !== session.digest) return null
    return { accessToken: accessToken(subject, session.id), refreshToken: next.token }
  }

  return {
    async register(input, context) {
      const email = normalizeEmail(input.email)
      if (email === null) throw new ValidationError([{ field: '/email', message: message('field.email') }])
      // the service is also called without HTTP: it applies the policy itself, with the message the schema gives
      const passwordProblem = newPasswordProblem(input.password)
      if (passwordProblem !== null)
        throw new ValidationError([{ field: '/password', message: passwordProblem }])
      const code = input.verificationCode ?? null
      if (code === null && deps.registerCode === 'required')
        throw new ValidationError([{ field: '/verification_code', message: message('field.required') }])
      // docs/api.md §4.3: the code before the address is looked up, so that only who reads the mailbox learns
      // whether it is taken (AUTH_REGISTER_CODE=required); a right one proves the address
      if (code !== null) {
        const key = { address: email, purpose: 'register', userId: null } as const
        if (!deps.emailCodes || !(await deps.emailCodes.take(key, code, context)))
          throw new CodeRefusedError()
      }
      // the 409 reveals a registered e-mail by design (spec 4.3); checking first spares an Argon2 hash
      if (await users.findByEmail(email)) throw new EmailTakenError()
      const address = context.clientAddress === null ? undefined : clientNetwork(context.clientAddress)
      const user = await createUser(email, await hasher.hash(input.password, address), code !== null)
      let session: Session
      try {
        session = await startSession(user, context)
      } catch (error) {
        return undoRegistration(user, error)
      }
      record('registered', user.id, context)
      if (user.emailVerified) record('email_verified', user.id, context)
      // before the answer: a failure to queue it is the 503 of R7.3 (the account exists; a retry answers 409)
      await deps.webhooks?.publish([{ type: 'user.created', user: session.account }])
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
      /** spec 4.4 rule 3: one answer for an unknown address, a wrong password and a disabled account. */
      const refuse = async (reason: SecurityEventReason, userId: string | null): Promise<never> => {
        log.warn(
          {
            event: 'login_failed',
            reason,
            ...(userId === null ? {} : { userId }),
            clientAddress: context.clientAddress,
            ...requestIdField(context),
          },
          'login failed',
        )
        failed(reason, userId)
        await throttle.failed(pass)
        if (storesFailing) throw loginStoreFailure(new Error('a store failed during the login'))
        throw new InvalidCredentialsError()
      }
      if (user === null) {
        await hasher.verifyDummy(input.password, address)
        return refuse('unknown_email', null)
      }
      // an address the owner has logged in from (R8.6) waits ahead of a flood from others (R8.2); an account without
      // a usable password (docs/api.md §4.15) costs the same Argon2 work and gets the same answer as a wrong one
      const passwordHash = user.passwordHash
      if (!(await verifyAccountPassword(hasher, passwordHash, input.password, address, pass.remembered))) {
        return refuse('wrong_password', user.id)
      }
      // docs/api.md §2.1: a disabled account is refused after the same work, with the same answer
      if (user.status !== 'active') return refuse('disabled', user.id)
      let session: Session
      try {
        if (passwordHash !== null && hasher.needsRehash(passwordHash)) {
          // a busy queue skips the re-hash until a later login: a 503 here would answer a right password only
          const rehashed = await hasher.hash(input.password, address).catch((error: unknown) => {
            if (error instanceof ServiceBusyError) return null
            throw error
          })
          if (rehashed !== null) await users.updatePasswordHash(user.id, rehashed)
        }
        const login = { email: pass.email, address: pass.address, remembered: pass.remembered }
        const challenge = await deps.secondStep?.(user, context, 'password', login)
        if (challenge) {
          storesFailing = false
          return challenge
        }
        session = await startSession(user, context)
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
      let subject: TokenSubject
      try {
        subject = tokens.verifyRefreshSubject(refreshToken)
      } catch (error) {
        // a bad signature, an expired, malformed or access token: whose it claims to be is not believed
        record('refresh_refused', null, context, 'invalid')
        throw error
      }
      const { userId } = subject
      const now = clock.now()
      const digest = refreshTokenDigest(refreshToken)
      // a token of before sessions were named (no sid) whose successor must name its session, or of before tokens
      // carried their session's tag (R2.3.3): its session is looked up once, and its successors carry both
      const legacy =
        (subject.sessionId === null && sessionConfig.sidInRefreshTokens) || subject.sessionTag === null
          ? await sessions.find(userId, { digest }, now)
          : null
      const sessionId = subject.sessionId ?? legacy?.id ?? null
      const tag = subject.sessionTag ?? (legacy === null ? null : sessionTag(legacy.id))
      // docs/api.md R4.5.3, R4.7.2: a token whose sub names no account is refused. The rotation below sees to it: a
      // stored session implies its account (a foreign key in SQL; in Redis, `tessera users delete` retires the
      // user's sessions before it deletes the account, and a retired user gets no new one), so a valid token of no
      // account finds nothing to rotate, and no account read is added to the refresh.
      const successor = successorSubject(userId, sessionId, tag, subject.role)
      const next = tokens.successor(digest, successor, now)
      const address = context.clientAddress === null ? null : coarseNetwork(context.clientAddress)
      const rotated = await sessions.rotate(
        userId,
        digest,
        // AUTH_SESSION_LIFETIME_DAYS is checked and applied by the rotation itself (R3.16): no read is added
        {
          digest: refreshTokenDigest(next.token),
          expiresAt: next.expiresAt,
          clientAddress: address,
          lifetimeMs,
        },
        now,
      )
      if (rotated) {
        record('refresh_succeeded', userId, context)
        return { accessToken: accessToken(successor, sessionId), refreshToken: next.token }
      }
      // spec 4.5 rule 3: a token already rotated (or replaced by a login, or logged out) is refused, but for the
      // grace and the detection of reuse, which look at the session it was rotated in
      const rotatedIn = await sessions.find(userId, { previousDigest: digest }, now)
      const replayed = rotatedIn === null ? null : withinGrace(rotatedIn, digest, subject.role, now)
      if (replayed !== null) {
        record('refresh_succeeded', userId, context, 'grace')
        return replayed
      }
      if (sessionConfig.reuseEndsSession) {
        const reusedIn =
          rotatedIn ??
          (subject.sessionId === null ? null : await sessions.find(userId, { id: subject.sessionId }, now))
        // a session past its lifetime (one stored before the setting: its expiry says nothing of it) refuses its
        // current token too, which is no reuse
        if (
          reusedIn !== null &&
          !pastLifetime(reusedIn, now) &&
          (await sessions.end(userId, reusedIn.id, now))
        ) {
          record('refresh_reuse_detected', userId, context)
          log.warn(
            {
              event: 'refresh_reuse_detected',
              userId,
              clientAddress: context.clientAddress,
              ...requestIdField(context),
            },
            'a rotated refresh token was used again: its session is ended',
          )
          deps.onReuseDetected?.()
          // the one session.ended a refresh can cause (docs/api.md R6.5.12): no other refresh does webhook work
          await deps.webhooks?.publish([
            { type: 'session.ended', userId, sessionId: reusedIn.id, reason: 'reuse_detected' },
          ])
          throw new RefreshTokenInvalidError()
        }
      }
      // the first reuse of a token is an event of its account; a client replaying it again is a flood (R6.3.4)
      record('refresh_refused', userId, context, reuses.isFirstReuse(digest) ? 'reused' : 'replayed')
      throw new RefreshTokenInvalidError()
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
