import { clientNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import type { AccountCodePurpose, PublicCodePurpose } from '../code-purpose.js'
import {
  AccessTokenInvalidError,
  CodeRefusedError,
  EmailTakenError,
  InvalidCredentialsError,
  PasswordIncorrectError,
  ValidationError,
} from '../errors.js'
import { message } from '../language/message.js'
import type { Mailer, MailIntent } from '../mail/mail-intent.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { SessionEndReason } from '../sessions/session-end-reason.js'
import type { Caller, SessionService } from '../sessions/session-service.js'
import type { AuditStore, FactorStore, ProviderLinkStore, UserRecord, UserStore } from '../storage/stores.js'
import type { Account, Session } from './account.js'
import { toAccount } from './account.js'
import { type AccountChange, type AccountEvents, NO_ACCOUNT_EVENTS } from './account-events.js'
import { type AccountRemovalStores, removeAccount } from './account-removal.js'
import type { SecurityLog } from './account-service.js'
import { claimUnverifiedAddress } from './address-claim.js'
import { normalizeEmail } from './email.js'
import type { EmailCodes } from './email-codes.js'
import type { LoginThrottle } from './login-throttle.js'
import { type PasswordHasher, verifyAccountPassword } from './password-hasher.js'
import { newPasswordProblem } from './password-policy.js'
import type { SecondStepGate, SignIn, StartSession } from './session-starter.js'

/** A code as a request gives it (http/schemas.ts); at a reset, anything else is read as a reset key. */
const SIX_DIGITS = /^[0-9]{6}$/

export interface EmailAccountServiceDeps {
  users: UserStore
  /** The provider links an impostor's setup may hold (docs/api.md §4.15). */
  providerLinks: Pick<ProviderLinkStore, 'unlinkAll'>
  /** The second factors an impostor's setup may hold (docs/api.md §4.15, §4.25). */
  factors: Pick<FactorStore, 'removeAll'>
  codes: EmailCodes
  /** The stores an account's deletion empties besides the account (docs/api.md §4.21). */
  stores: Omit<AccountRemovalStores, 'users'> & { audit: Pick<AuditStore, 'eraseClientAddresses'> }
  /** Ends sessions: the one way access is ended (docs/api.md §3). */
  sessions: Pick<SessionService, 'endAccountSessions' | 'live'>
  startSession: StartSession
  /** The second step of a sign-in (docs/api.md §4.25); null: every first factor signs in alone. */
  secondStep: SecondStepGate | null
  hasher: PasswordHasher
  /** A password given to confirm a change or a deletion is guessed at the pace of a login (docs/api.md R8.4 to R8.6). */
  throttle: LoginThrottle
  mailer: Mailer
  clock: Clock
  record: RecordSecurityEvent
  log: SecurityLog & { error(fields: Record<string, unknown>, message: string): void }
  /** The refresh-token lifetime: how long a deleted account's user is kept retired (SessionStore.retire). */
  refreshTokenTtlMs: number
  /** The webhook events of each change (docs/api.md R6.5.9), queued before the answer; absent, none. */
  webhooks?: AccountEvents
}

/**
 * The account by its e-mail address (docs/api.md §4.14 to §4.21): codes, sign-in by code, password reset and
 * change, e-mail change and verification, and leaving. Every method that takes a code refuses a wrong, expired,
 * used, out-of-tries or other-purpose one with one answer (CodeRefusedError; InvalidCredentialsError at sign-in).
 */
export interface EmailAccountService {
  /** POST /auth/email/send-code: the same work and answer whether or not the address has an account. */
  sendPublicCode(email: string, purpose: PublicCodePurpose, context: RequestContext): Promise<void>
  /** POST /auth/me/send-code: to the account's address, or to `newEmail` for `change_email`. */
  sendAccountCode(
    caller: Caller,
    purpose: AccountCodePurpose,
    newEmail: string | null,
    context: RequestContext,
  ): Promise<void>
  /**
   * POST /auth/login/email-code: a wrong or expired code and an unknown address get the same 401. An account with a
   * second factor gets its challenge instead of a session (docs/api.md §4.25).
   */
  loginWithCode(email: string, code: string, context: RequestContext): Promise<SignIn>
  /**
   * POST /auth/password/reset: the new password, every session ended, a new one answered, a notice mailed. `code` is
   * the six digits of a code or the reset key mailed with it, each checked only against its own kind. An account with a
   * second factor gets its challenge instead of the new session: the password is changed and the sessions end all
   * the same (docs/api.md §4.25).
   */
  resetPassword(
    input: { email: string; code: string; newPassword: string },
    context: RequestContext,
  ): Promise<SignIn>
  /** POST /auth/password/change: the new password, every other session ended, a notice mailed. */
  changePassword(
    caller: Caller,
    input: { currentPassword: string; newPassword: string },
    context: RequestContext,
  ): Promise<Session>
  /** POST /auth/email/change: the proved new address; the old one is told. */
  changeEmail(
    caller: Caller,
    input: { newEmail: string; code: string },
    context: RequestContext,
  ): Promise<Account>
  /** POST /auth/email/verify. */
  verifyEmail(caller: Caller, code: string, context: RequestContext): Promise<Account>
  /**
   * Proves that the holder of the account is present, for a change an access token alone may not make (docs/api.md
   * §4.25: adding a second factor): the account's password, checked at a login's pace, or a code of `purpose` sent to
   * its address. Throws PasswordIncorrectError or CodeRefusedError.
   */
  proveHolder(
    user: UserRecord,
    proof: { password: string } | { code: string },
    purpose: 'delete_account' | 'manage_factors',
    context: RequestContext,
  ): Promise<void>
  /** POST /auth/delete: the account, its sessions, codes and queued mail. */
  deleteAccount(
    caller: Caller,
    proof: { password: string } | { code: string },
    context: RequestContext,
  ): Promise<void>
}

export function createEmailAccountService(deps: EmailAccountServiceDeps): EmailAccountService {
  const { users, codes, sessions, startSession, hasher, throttle, mailer, record, log } = deps
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS

  /** The address a request names, normalized; the schema has checked it, a call off HTTP gets the same 400. */
  const address = (email: string, field: string) => {
    const normalized = normalizeEmail(email)
    if (normalized === null) throw new ValidationError([{ field, message: message('field.email') }])
    return normalized
  }
  const checkNewPassword = (password: string) => {
    const problem = newPasswordProblem(password)
    if (problem !== null) throw new ValidationError([{ field: '/new_password', message: problem }])
  }
  /** The caller's account; a token whose account is gone is refused like any invalid token. */
  const callerAccount = async (caller: Caller) => {
    const user = await users.findById(caller.userId)
    if (user === null) throw new AccessTokenInvalidError()
    return user
  }
  const requester = (context: RequestContext) =>
    context.clientAddress === null ? undefined : clientNetwork(context.clientAddress)

  /** docs/api.md §4.15: the first proof of an unverified account's address ends what was set up before it. */
  const proveAddress = (user: UserRecord, context: RequestContext): Promise<UserRecord> =>
    claimUnverifiedAddress(
      { users, providerLinks: deps.providerLinks, factors: deps.factors, sessions, record, log, webhooks },
      user,
      context,
    )

  /**
   * A notice about what was done (docs/api.md §6.4). The change it tells of is made and answered whether or not the
   * notice could be queued: a store that fails now is logged, not turned into a failure of a change already made.
   */
  const notify = async (to: string, intent: MailIntent, userId: string, context: RequestContext) => {
    if (!mailer.available) return
    try {
      await mailer.queue(to, intent, userId, context.language)
    } catch (error) {
      log.error({ err: error, userId, event: 'mail_queued' }, 'a notice could not be queued')
    }
  }

  /** Checks the account's password to confirm a change, at a login's pace. */
  const confirmPassword = async (user: UserRecord, password: string, context: RequestContext) => {
    const from = requester(context)
    const pass = await throttle.admit(user.email, from ?? '')
    if (!(await verifyAccountPassword(hasher, user.passwordHash, password, from, pass.remembered))) {
      await throttle.failed(pass)
      throw new PasswordIncorrectError()
    }
    await throttle.succeeded(pass)
  }

  /** A new session for the account, every other one ended (`reason`): the end of a reset and of a password change. */
  const startOnly = async (
    user: UserRecord,
    context: RequestContext,
    reason: SessionEndReason,
    secondFactor = false,
  ) => {
    const session = await startSession(user, context, { secondFactor })
    await sessions.endAccountSessions(user.id, session.sessionId, reason)
    return session
  }

  const proveHolder: EmailAccountService['proveHolder'] = async (user, proof, purpose, context) => {
    if ('password' in proof) return confirmPassword(user, proof.password, context)
    const key = { address: user.email, purpose, userId: user.id } as const
    if (!(await codes.take(key, proof.code, context))) throw new CodeRefusedError()
  }

  return {
    proveHolder,

    async sendPublicCode(email, purpose, context) {
      await codes.send({ address: address(email, '/email'), purpose, userId: null }, context)
    },

    async sendAccountCode(caller, purpose, newEmail, context) {
      const user = await callerAccount(caller)
      if (purpose !== 'change_email') {
        await codes.send({ address: user.email, purpose, userId: user.id }, context)
        return
      }
      if (newEmail === null)
        throw new ValidationError([{ field: '/new_email', message: message('field.required') }])
      await codes.send({ address: address(newEmail, '/new_email'), purpose, userId: user.id }, context)
    },

    async loginWithCode(email, code, context) {
      const normalized = address(email, '/email')
      const taken = await codes.take({ address: normalized, purpose: 'login', userId: null }, code, context)
      // looked up whatever the code was: a wrong code and an unknown address cost the same work
      const user = await users.findByEmail(normalized)
      if (!taken || user === null) {
        if (taken) record('login_failed', null, context, 'unknown_email')
        throw new InvalidCredentialsError()
      }
      if (user.status !== 'active') {
        record('login_failed', user.id, context, 'disabled')
        throw new InvalidCredentialsError()
      }
      const proved = await proveAddress(user, context)
      const challenge = await deps.secondStep?.(proved, context, 'email_code')
      if (challenge) return challenge
      const session = await startSession(proved, context)
      record('login_succeeded', user.id, context, 'email_code')
      return session
    },

    async resetPassword({ email, code, newPassword }, context) {
      const normalized = address(email, '/email')
      checkNewPassword(newPassword)
      const key = { address: normalized, purpose: 'reset_password', userId: null } as const
      // six digits try the codes (and count against their tries); anything else can only be a reset key, which wrong
      // tries cannot use up (docs/api.md R4.17)
      const taken = SIX_DIGITS.test(code)
        ? await codes.take(key, code, context)
        : await codes.takeResetKey(key, code, context)
      const user = await users.findByEmail(normalized)
      if (!taken || user === null) throw new CodeRefusedError()
      // a disabled account cannot log in, which a reset answers with: refused as a login would be, nothing changed
      if (user.status !== 'active') {
        record('login_failed', user.id, context, 'disabled')
        throw new InvalidCredentialsError()
      }
      const passwordHash = await hasher.hash(newPassword, requester(context))
      const proved = await proveAddress(user, context)
      await users.updatePasswordHash(user.id, passwordHash)
      const from = requester(context)
      // a second factor: the password is changed and every session ends, but only the second step signs in, and
      // only it makes the address one the owner uses (R8.6), so a reset cannot exempt a guesser's address
      const challenge = await deps.secondStep?.(
        { ...proved, passwordHash },
        context,
        'reset',
        from === undefined ? undefined : { email: user.email, address: from, remembered: false },
      )
      let signIn: SignIn
      if (challenge) {
        await sessions.endAccountSessions(user.id, null, 'password_reset')
        signIn = challenge
      } else {
        signIn = await startOnly({ ...proved, passwordHash }, context, 'password_reset')
        // the address that chose the password is one its owner uses (R8.6)
        if (from !== undefined) await throttle.remember(user.email, from)
      }
      record('password_reset', user.id, context)
      await webhooks.passwordChanged(user.id, 'reset')
      await notify(user.email, { kind: 'notice', notice: 'password_reset', values: {} }, user.id, context)
      return signIn
    },

    async changePassword(caller, { currentPassword, newPassword }, context) {
      checkNewPassword(newPassword)
      const user = await callerAccount(caller)
      await confirmPassword(user, currentPassword, context)
      // the new session is established as the caller's was (docs/api.md §4.25)
      const { secondFactor } = await sessions.live(caller)
      const passwordHash = await hasher.hash(newPassword, requester(context))
      await users.updatePasswordHash(user.id, passwordHash)
      const session = await startOnly({ ...user, passwordHash }, context, 'password_changed', secondFactor)
      record('password_changed', user.id, context)
      await webhooks.passwordChanged(user.id, 'changed')
      await notify(user.email, { kind: 'notice', notice: 'password_changed', values: {} }, user.id, context)
      return session
    },

    async changeEmail(caller, { newEmail, code }, context) {
      const normalized = address(newEmail, '/new_email')
      const key = { address: normalized, purpose: 'change_email', userId: caller.userId } as const
      if (!(await codes.take(key, code, context))) throw new CodeRefusedError()
      const user = await callerAccount(caller)
      const changed = await users.changeEmail(user.id, normalized)
      if (changed === 'email_taken') throw new EmailTakenError()
      if (changed === 'missing') throw new AccessTokenInvalidError()
      record('email_changed', user.id, context)
      const changes: AccountChange[] = []
      if (normalized !== user.email) changes.push('email')
      if (!user.emailVerified) changes.push('verification')
      await webhooks.updated(user.id, changes)
      if (normalized !== user.email) {
        const values = { new_email: normalized }
        await notify(user.email, { kind: 'notice', notice: 'email_changed', values }, user.id, context)
      }
      return toAccount({ ...user, email: normalized, emailVerified: true })
    },

    async verifyEmail(caller, code, context) {
      const user = await callerAccount(caller)
      const key = { address: user.email, purpose: 'verify_email', userId: user.id } as const
      if (!(await codes.take(key, code, context))) throw new CodeRefusedError()
      if (!(await users.markEmailVerified(user.id))) throw new AccessTokenInvalidError()
      // the caller is signed in to the account: nothing it set up is ended (docs/api.md §4.15)
      if (!user.emailVerified) {
        record('email_verified', user.id, context)
        await webhooks.updated(user.id, ['verification'])
      }
      return toAccount({ ...user, emailVerified: true })
    },

    async deleteAccount(caller, proof, context) {
      const user = await callerAccount(caller)
      await proveHolder(user, proof, 'delete_account', context)
      const retiredUntil = deps.clock.now() + deps.refreshTokenTtlMs
      if (!(await removeAccount({ ...deps.stores, users }, user, retiredUntil)))
        throw new AccessTokenInvalidError()
      // the trail keeps the account's events without their client addresses, as `tessera users delete` does
      await deps.stores.audit.eraseClientAddresses(user.id).catch((error: unknown) => {
        log.error(
          { err: error, userId: user.id },
          'the account was deleted, but the client addresses of its audit events were not erased',
        )
      })
      // the account's events lost their client addresses; this one names none either
      record('account_deleted', user.id, { clientAddress: null, requestId: context.requestId })
    },
  }
}
