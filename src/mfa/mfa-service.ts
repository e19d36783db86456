import { randomBytes } from 'node:crypto'
import type { Session } from '../auth/account.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from '../auth/account-events.js'
import type { EmailAccountService } from '../auth/email-account-service.js'
import type { LoginPass, LoginThrottle } from '../auth/login-throttle.js'
import type { OneTimeTickets } from '../auth/one-time-tickets.js'
import type {
  FirstFactor,
  SecondFactorChallenge,
  SecondFactorKind,
  SecondStepGate,
  StartSession,
} from '../auth/session-starter.js'
import { clientNetwork } from '../client-network.js'
import type { Clock } from '../clock.js'
import {
  AccessTokenInvalidError,
  CodeRefusedError,
  EmailUnverifiedError,
  FactorNotFoundError,
  RateLimitedError,
  SecondFactorInvalidError,
  SecondFactorRequiredError,
} from '../errors.js'
import type { Mailer, MailIntent } from '../mail/mail-intent.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { Caller, SessionService } from '../sessions/session-service.js'
import type { FactorStore, StoredFactor, UserRecord, UserStore } from '../storage/stores.js'
import type { FactorSecrets } from './factor-secrets.js'
import { newRecoveryCodes, readRecoveryCode } from './recovery-codes.js'
import { matchingStep, newTotpSecret, qrCodeDataUrl, totpUri } from './totp.js'

/** How long a challenge's ticket is good (docs/api.md §4.25). */
export const CHALLENGE_TTL_MS = 5 * 60_000
/** Tries a challenge's ticket allows; the fifth wrong one uses it up. */
export const CHALLENGE_TRIES = 5
/** The name of an authenticator-app factor (a passkey's is its owner's). */
export const TOTP_FACTOR_NAME = 'Authenticator app'

/** How a second step went, as GET /metrics counts it (metrics/mfa-metrics.ts). */
export type SecondStepOutcome = 'challenged' | 'passed' | 'failed'

/** Told each second step's outcome. */
export interface SecondStepObserver {
  secondStep(outcome: SecondStepOutcome): void
}

/** What a request proves the holder's presence with: the password, or a `manage_factors` code. */
export type HolderProof = { password: string } | { code: string }

/** A factor as GET /auth/mfa/factors shows it. */
export interface FactorView {
  id: string
  type: StoredFactor['type']
  name: string
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string
  lastUsedAt: string | null
}

/** POST /auth/mfa/totp/setup's answer: what the authenticator app is given. */
export interface TotpSetup {
  factorId: string
  /** base32, for typing in by hand. */
  secret: string
  /** The `otpauth://totp/` URI. */
  uri: string
  /** The URI as a QR code: an `image/svg+xml` data URL. */
  qrCode: string
}

/** A challenge in progress, as its ticket's sealed payload holds it. */
interface Challenge {
  userId: string
  firstFactor: FirstFactor
  /** Wrong tries so far. */
  tries: number
  /** Epoch ms: when the ticket expires (kept when it is put back after a wrong try). */
  expiresAt: number
  /** A password login's throttle pass, settled when the second step passes (R8.5, R8.6). */
  login: { email: string; address: string; remembered: boolean } | null
}

export interface MfaServiceDeps {
  users: Pick<UserStore, 'findById'>
  factors: FactorStore
  secrets: FactorSecrets
  tickets: OneTimeTickets
  sessions: Pick<SessionService, 'live' | 'markSecondFactor' | 'endAccountSessions'>
  startSession: StartSession
  /** The password or a `manage_factors` code (EmailAccountService.proveHolder). */
  proveHolder: EmailAccountService['proveHolder']
  /** Each try at a second step counts against the account as a login does (R8.5). */
  throttle: LoginThrottle
  mailer: Mailer
  clock: Clock
  record: RecordSecurityEvent
  log: { error(fields: Record<string, unknown>, message: string): void }
  /** MFA_ISSUER: the issuer the authenticator app shows. */
  issuer: string
  /** Counts each second step's outcome (METRICS_PORT); absent or null, nothing is counted. */
  observer?: SecondStepObserver | null
  /** The webhook events of each change of the factors (docs/api.md R6.5.11), queued before the answer; absent, none. */
  webhooks?: Pick<AccountEvents, 'mfaChanged'>
}

/**
 * Second factors (docs/api.md §4.25): authenticator-app codes (TOTP) with recovery codes, the challenge a first
 * factor gets for an account that has one, and the factors' management. Passkeys (mfa/passkeys.ts) are factors of
 * the same store and complete the same challenges. Whether a session "was established with the second factor" is
 * read from the live session (SessionService.live), on every instance.
 */
export interface MfaService {
  /** The gate every first factor passes (SecondStepGate). */
  challenge: SecondStepGate
  /**
   * POST /auth/mfa/verify: completes the challenge of `ticket` with a TOTP code or a recovery code, and starts a
   * session established with the second factor. Every refusal is SecondFactorInvalidError (a wrong or replayed
   * code, a ticket unknown, used, expired or out of tries, an account that can no longer sign in); RateLimitedError
   * when the account's throttle refuses the try (the ticket is kept as it was).
   */
  verify(
    ticket: string,
    proof: { code: string } | { recoveryCode: string },
    context: RequestContext,
  ): Promise<Session>
  /**
   * Completes the challenge of `ticket` with a passkey of the account `userId` that verified: a session established
   * with the second factor. SecondFactorInvalidError when the ticket is not one of `userId`'s (a try counted).
   */
  completeWithPasskey(ticket: string, userId: string, context: RequestContext): Promise<Session>
  /**
   * Uses up a challenge's try with a passkey that failed (not the account's, a bad assertion): counts the try.
   * Resolves whether or not there was such a ticket.
   */
  refusePasskey(ticket: string, context: RequestContext): Promise<void>
  /**
   * The account the caller may add a factor to: the caller's live session, a verified address (else
   * EmailUnverifiedError) and the holder's proof (PasswordIncorrectError, CodeRefusedError).
   */
  enrolling(caller: Caller, proof: HolderProof, context: RequestContext): Promise<UserRecord>
  /** POST /auth/mfa/totp/setup: a pending TOTP factor and what the app needs of it. */
  setupTotp(caller: Caller, proof: HolderProof, context: RequestContext): Promise<TotpSetup>
  /**
   * POST /auth/mfa/totp/confirm: the app's code confirms the pending factor; the caller's session counts as
   * established with the second factor from then on, the account's other sessions end, a notice is mailed. Resolves
   * with a new set of recovery codes (any earlier set void). FactorNotFoundError for no such pending factor,
   * CodeRefusedError for a wrong code.
   */
  confirmTotp(caller: Caller, factorId: string, code: string, context: RequestContext): Promise<string[]>
  /**
   * What the caller's account has of a second factor: its confirmed factors and how many recovery codes are left,
   * or the same for the account `userId` (`tessera users show`).
   */
  factors(userId: string): Promise<{ factors: FactorView[]; recoveryCodesLeft: number }>
  /**
   * A factor was added (a passkey registered): the caller's session counts as established with it, the account's
   * other sessions end, the event is recorded and a notice mailed.
   */
  added(caller: Caller, factor: StoredFactor, context: RequestContext): Promise<void>
  /**
   * DELETE /auth/mfa/factors/<id>: needs a session established with the second factor (SecondFactorRequiredError).
   * Removing the last factor turns the second step off and voids the recovery codes. The other sessions end.
   */
  removeFactor(caller: Caller, factorId: string, context: RequestContext): Promise<void>
  /** POST /auth/mfa/recovery-codes: a new set, the old one void; needs the second factor, as removal does. */
  newRecoveryCodes(caller: Caller, context: RequestContext): Promise<string[]>
  /**
   * Removes every factor and recovery code of the account (`tessera users mfa-reset`: a lost phone); resolves with
   * how many factors. The caller ends the sessions.
   */
  reset(userId: string, context: RequestContext): Promise<number>
}

const CHALLENGE = 'mfa_challenge'

export function createMfaService(deps: MfaServiceDeps): MfaService {
  const { users, factors, secrets, tickets, sessions, startSession, throttle, clock, record } = deps
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS

  const confirmed = (list: readonly StoredFactor[]) => list.filter((factor) => factor.confirmed)

  /** The kinds of proof an account with these factors can give. */
  const kindsOf = async (userId: string, list: readonly StoredFactor[]): Promise<SecondFactorKind[]> => {
    const kinds: SecondFactorKind[] = []
    if (list.some((factor) => factor.type === 'totp')) kinds.push('totp')
    if (list.some((factor) => factor.type === 'passkey')) kinds.push('passkey')
    if ((await factors.recoveryCodesLeft(userId)) > 0) kinds.push('recovery_code')
    return kinds
  }

  const takeChallenge = async (ticket: string): Promise<Challenge | null> => {
    const value = await tickets.take(CHALLENGE, ticket)
    if (value === null || typeof value.userId !== 'string' || typeof value.tries !== 'number') return null
    if (typeof value.expiresAt !== 'number' || typeof value.firstFactor !== 'string') return null
    const login = value.login as Challenge['login'] | undefined
    return {
      userId: value.userId,
      firstFactor: value.firstFactor as FirstFactor,
      tries: value.tries,
      expiresAt: value.expiresAt,
      login: login ?? null,
    }
  }

  /** A wrong try: the ticket is put back with one more try counted, unless that was its last. */
  const wrongTry = async (ticket: string, challenge: Challenge) => {
    deps.observer?.secondStep('failed')
    const tries = challenge.tries + 1
    if (tries < CHALLENGE_TRIES && challenge.expiresAt > clock.now())
      await tickets.put(CHALLENGE, { ...challenge, tries }, challenge.expiresAt, ticket)
  }

  const passOf = (login: NonNullable<Challenge['login']>): LoginPass => ({
    ...login,
    degraded: false,
    renewedRecently: false,
  })

  /** The account a challenge signs in to, if it still can; null otherwise. */
  const signInAccount = async (challenge: Challenge, context: RequestContext) => {
    const user = await users.findById(challenge.userId)
    if (user !== null && user.status === 'active') return user
    record('mfa_challenge_failed', challenge.userId, context, 'disabled')
    return null
  }

  /** The second step passed: the first factor's attempt is settled, and a session established with both starts. */
  const complete = async (
    user: UserRecord,
    challenge: Challenge,
    context: RequestContext,
  ): Promise<Session> => {
    if (challenge.login !== null) await throttle.succeeded(passOf(challenge.login))
    const session = await startSession(user, context, { secondFactor: true })
    record('login_succeeded', user.id, context, 'mfa')
    deps.observer?.secondStep('passed')
    return session
  }

  /** A TOTP code of one of the account's confirmed TOTP factors, not accepted before (across instances). */
  const acceptCode = async (userId: string, code: string, list: readonly StoredFactor[]) => {
    const now = clock.now()
    for (const factor of list) {
      if (factor.type !== 'totp' || !factor.confirmed || factor.secret === null) continue
      const secret = await secrets.open(factor.id, factor.secret)
      if (secret === null) continue
      const step = matchingStep(secret, code, now)
      if (step !== null && (await factors.useStep(userId, factor.id, step, now))) return true
    }
    return false
  }

  const acceptRecoveryCode = async (userId: string, text: string) => {
    const code = readRecoveryCode(text)
    if (code === null) return false
    return factors.useRecoveryCode(userId, await secrets.recoveryDigest(userId, code))
  }

  const replaceRecoveryCodes = async (userId: string): Promise<string[]> => {
    const codes = newRecoveryCodes()
    const digests = await Promise.all(
      codes.map((code) => secrets.recoveryDigest(userId, readRecoveryCode(code) as string)),
    )
    await factors.replaceRecoveryCodes(userId, digests)
    return codes
  }

  /** A notice about a change of factors; the change stands whether or not it could be queued. */
  const notify = async (user: UserRecord, intent: MailIntent, context: RequestContext) => {
    if (!deps.mailer.available) return
    try {
      await deps.mailer.queue(user.email, intent, user.id, context.language)
    } catch (error) {
      deps.log.error({ err: error, userId: user.id, event: 'mail_queued' }, 'a notice could not be queued')
    }
  }

  const callerAccount = async (caller: Caller) => {
    const user = await users.findById(caller.userId)
    if (user === null) throw new AccessTokenInvalidError()
    return user
  }

  /** The caller's live session, which must have been established with the second factor. */
  const withSecondFactor = async (caller: Caller) => {
    const session = await sessions.live(caller)
    if (!session.secondFactor) throw new SecondFactorRequiredError()
    return session
  }

  const view = (factor: StoredFactor): FactorView => ({
    id: factor.id,
    type: factor.type,
    name: factor.name,
    createdAt: new Date(factor.createdAt).toISOString(),
    lastUsedAt: factor.lastUsedAt === null ? null : new Date(factor.lastUsedAt).toISOString(),
  })

  const service: MfaService = {
    async challenge(user, _context, firstFactor, login) {
      const list = confirmed(await factors.list(user.id))
      if (list.length === 0) return null
      const challenge: Challenge = {
        userId: user.id,
        firstFactor,
        tries: 0,
        expiresAt: clock.now() + CHALLENGE_TTL_MS,
        login: login ?? null,
      }
      const [mfaTicket, kinds] = await Promise.all([
        tickets.put(CHALLENGE, challenge, challenge.expiresAt),
        kindsOf(user.id, list),
      ])
      deps.observer?.secondStep('challenged')
      return { mfaTicket, factors: kinds } satisfies SecondFactorChallenge
    },

    async verify(ticket, proof, context) {
      const challenge = await takeChallenge(ticket)
      if (challenge === null) {
        record('mfa_challenge_failed', null, context, 'ticket')
        throw new SecondFactorInvalidError()
      }
      const user = await signInAccount(challenge, context)
      if (user === null) throw new SecondFactorInvalidError()
      // each try is an attempt at the account, paced as a login's (R8.5): a refused one keeps the ticket as it was
      const address = context.clientAddress === null ? '' : clientNetwork(context.clientAddress)
      let pass: LoginPass
      try {
        pass = await throttle.admit(user.email, address)
      } catch (error) {
        if (error instanceof RateLimitedError)
          await tickets.put(CHALLENGE, challenge, challenge.expiresAt, ticket).catch(() => undefined)
        throw error
      }
      const accepted =
        'code' in proof
          ? await acceptCode(user.id, proof.code, await factors.list(user.id))
          : await acceptRecoveryCode(user.id, proof.recoveryCode)
      if (!accepted) {
        await throttle.failed(pass)
        record('mfa_challenge_failed', user.id, context, 'code' in proof ? 'totp' : 'recovery_code')
        await wrongTry(ticket, challenge)
        throw new SecondFactorInvalidError()
      }
      await throttle.succeeded(pass)
      if ('recoveryCode' in proof) record('recovery_code_used', user.id, context)
      return complete(user, challenge, context)
    },

    async completeWithPasskey(ticket, userId, context) {
      const challenge = await takeChallenge(ticket)
      if (challenge === null) {
        record('mfa_challenge_failed', null, context, 'ticket')
        throw new SecondFactorInvalidError()
      }
      if (challenge.userId !== userId) {
        record('mfa_challenge_failed', challenge.userId, context, 'passkey')
        await wrongTry(ticket, challenge)
        throw new SecondFactorInvalidError()
      }
      const user = await signInAccount(challenge, context)
      if (user === null) throw new SecondFactorInvalidError()
      return complete(user, challenge, context)
    },

    async refusePasskey(ticket, context) {
      const challenge = await takeChallenge(ticket)
      if (challenge === null) return
      record('mfa_challenge_failed', challenge.userId, context, 'passkey')
      await wrongTry(ticket, challenge)
    },

    async enrolling(caller, proof, context) {
      await sessions.live(caller)
      const user = await callerAccount(caller)
      if (!user.emailVerified) throw new EmailUnverifiedError()
      await deps.proveHolder(user, proof, 'manage_factors', context)
      return user
    },

    async setupTotp(caller, proof, context) {
      const user = await service.enrolling(caller, proof, context)
      const secret = newTotpSecret()
      const id = randomBytes(16).toString('hex')
      const stored = await factors.add({
        id,
        userId: user.id,
        type: 'totp',
        name: TOTP_FACTOR_NAME,
        confirmed: false,
        secret: await secrets.seal(id, secret),
        lastStep: null,
        credentialId: null,
        publicKey: null,
        counter: 0,
        backedUp: false,
        transports: [],
        createdAt: clock.now(),
        lastUsedAt: null,
      })
      if (stored !== 'added') throw new AccessTokenInvalidError()
      const uri = totpUri(secret, deps.issuer, user.email)
      return { factorId: id, secret, uri, qrCode: await qrCodeDataUrl(uri) }
    },

    async confirmTotp(caller, factorId, code, context) {
      const session = await sessions.live(caller)
      const user = await callerAccount(caller)
      const list = await factors.list(user.id)
      const factor = list.find((each) => each.id === factorId && each.type === 'totp' && !each.confirmed)
      if (factor === undefined || factor.secret === null) throw new FactorNotFoundError()
      const secret = await secrets.open(factor.id, factor.secret)
      const step = secret === null ? null : matchingStep(secret, code, clock.now())
      if (step === null) throw new CodeRefusedError()
      if (!(await factors.confirm(user.id, factor.id, step, clock.now()))) throw new FactorNotFoundError()
      const codes = await replaceRecoveryCodes(user.id)
      await sessions.markSecondFactor(caller)
      record('mfa_enabled', user.id, context, 'totp')
      await sessions.endAccountSessions(user.id, session.id, 'mfa_changed')
      await webhooks.mfaChanged(user.id)
      await notify(user, { kind: 'notice', notice: 'factor_added', values: { factor: factor.name } }, context)
      return codes
    },

    async factors(userId) {
      const [list, recoveryCodesLeft] = await Promise.all([
        factors.list(userId),
        factors.recoveryCodesLeft(userId),
      ])
      return { factors: confirmed(list).map(view), recoveryCodesLeft }
    },

    async added(caller, factor, context) {
      const session = await sessions.live(caller)
      const user = await callerAccount(caller)
      await sessions.markSecondFactor(caller)
      record(factor.type === 'passkey' ? 'passkey_added' : 'mfa_enabled', user.id, context, factor.type)
      await sessions.endAccountSessions(user.id, session.id, 'mfa_changed')
      await webhooks.mfaChanged(user.id)
      await notify(user, { kind: 'notice', notice: 'factor_added', values: { factor: factor.name } }, context)
    },

    async removeFactor(caller, factorId, context) {
      const session = await withSecondFactor(caller)
      const user = await callerAccount(caller)
      const factor = (await factors.list(user.id)).find((each) => each.id === factorId)
      if (factor === undefined) throw new FactorNotFoundError()
      const { removed } = await factors.remove(user.id, factorId)
      if (!removed) throw new FactorNotFoundError()
      record(factor.type === 'passkey' ? 'passkey_removed' : 'mfa_disabled', user.id, context, factor.type)
      await sessions.endAccountSessions(user.id, session.id, 'mfa_changed')
      // a pending factor was never one the account could use: no change of its factors to tell
      if (factor.confirmed) await webhooks.mfaChanged(user.id)
      if (factor.confirmed)
        await notify(
          user,
          { kind: 'notice', notice: 'factor_removed', values: { factor: factor.name } },
          context,
        )
    },

    async newRecoveryCodes(caller, _context) {
      await withSecondFactor(caller)
      if (confirmed(await factors.list(caller.userId)).length === 0) throw new SecondFactorRequiredError()
      return replaceRecoveryCodes(caller.userId)
    },

    async reset(userId, context) {
      const removed = await factors.removeAll(userId)
      if (removed > 0) {
        record('mfa_disabled', userId, context, 'operator')
        await webhooks.mfaChanged(userId)
      }
      return removed
    },
  }
  return service
}
