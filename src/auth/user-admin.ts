import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import { describeCause, OperationFailedError } from '../errors.js'
import type { SecurityEvent, SecurityEventType } from '../security-event.js'
import type { SessionEndReason } from '../sessions/session-end-reason.js'
import {
  type AuditStore,
  type EmailCodeStore,
  type FactorStore,
  type FactorType,
  type OutboxStore,
  ROLE_NAME,
  type SessionStore,
  type StoredSession,
  type Stores,
  type UserRecord,
  type UserStore,
} from '../storage/stores.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from './account-events.js'
import { removeAccount } from './account-removal.js'
import { normalizeEmail } from './email.js'
import { isUserId } from './user-id.js'

/** A user named on the command line: by id (10 digits) or by e-mail address. */
export type UserRef = { id: string } | { email: string }

/** `tessera users show`: the account, never its password hash, and its sessions. */
export interface UserDetails {
  id: string
  email: string
  createdAt: string
  /** How many unexpired sessions the user has. */
  sessions: number
  /** When the latest of its sessions' refresh tokens expires (epoch ms); null when it has none. */
  refreshTokenExpiresAt: number | null
  /** Its confirmed second factors (docs/api.md §4.25), oldest first. */
  factors: { id: string; type: FactorType; name: string }[]
}

/** What `set-role`, `disable` or `enable` did: the account as it is now, and whether this call changed it. */
export interface AccountChange {
  /** The account after the call: the new role or status and updatedAt when changed, as read otherwise. */
  user: UserRecord
  /** False when the account already had that role or status: nothing was written, no event recorded. */
  changed: boolean
  /** How many unexpired sessions the call ended (0 for `enable`). */
  sessionsEnded: number
}

export interface UserAdminDeps {
  users: UserStore
  sessions: SessionStore
  audit: AuditStore
  /** The account's codes and queued mail go with it (docs/api.md R6.4.6). */
  codes: Pick<EmailCodeStore, 'deleteFor'>
  outbox: Pick<OutboxStore, 'deleteFor'>
  /** The second factors `show` lists and `mfa-reset` removes (docs/api.md §4.25). */
  factors: Pick<FactorStore, 'list' | 'removeAll'>
  clock: Clock
  /** The refresh-token lifetime: how long a deleted account's user is kept retired (SessionStore.retire). */
  refreshTokenTtlMs: number
  /** False when AUDIT_RETENTION_DAYS is 0, which keeps no trail: no event is appended (addresses are still erased). */
  recordEvents: boolean
  /**
   * The webhook events of each act (docs/api.md R6.5.9 to R6.5.12), queued before it resolves, `user.deleted` in the
   * deletion's own transaction (removeAccount); absent, none.
   */
  webhooks?: AccountEvents
}

export interface UserAdmin {
  /** The account named by `ref`; OperationFailedError when there is none. */
  find(ref: UserRef): Promise<UserRecord>
  /** A page of accounts in id order (UserStore.list). */
  list(page: { after?: string; limit: number }): Promise<UserRecord[]>
  details(user: UserRecord): Promise<UserDetails>
  /** The user's unexpired sessions, most recently used first (`tessera users sessions`). */
  sessions(user: UserRecord): Promise<StoredSession[]>
  /** Replaces the password hash, ends every session of the user and records `password_reset`. */
  resetPassword(user: UserRecord, passwordHash: string): Promise<void>
  /**
   * Removes every second factor and recovery code of the account (a lost phone), records `mfa_disabled`, and ends
   * every session; resolves with how many factors and sessions there were.
   */
  mfaReset(user: UserRecord): Promise<{ factorsRemoved: number; sessionsEnded: number }>
  /** Ends every session of the user and records `sessions_revoked`; resolves with how many there were. */
  revoke(user: UserRecord): Promise<number>
  /**
   * Gives the account the role `role` (ROLE_NAME), records `role_changed` and ends every session: its tokens carry
   * the role from its next login. Nothing at all when it already has that role.
   */
  setRole(user: UserRecord, role: string): Promise<AccountChange>
  /**
   * Disables the account, records `account_disabled`, then ends every session. When it is already disabled, only
   * the sessions are ended (normally none: this finishes a disable whose end of the sessions failed).
   */
  disable(user: UserRecord): Promise<AccountChange>
  /** Enables the account again and records `account_enabled`; nothing when it is active. */
  enable(user: UserRecord): Promise<AccountChange>
  /**
   * Deletes the account and its sessions, erases the client addresses of its audit events (which are kept
   * until the retention prunes them) and records `account_deleted`. Resolves with how many events lost their address.
   */
  delete(user: UserRecord): Promise<{ addressesErased: number }>
}

/** How the sessions that an act's event records the end of end, as their `session.ended` events say. */
const ENDED_BY: Partial<Record<SecurityEventType, SessionEndReason>> = {
  mfa_disabled: 'mfa_changed',
  role_changed: 'role_changed',
  account_disabled: 'disabled',
}

/** `<email|id>` of the command line; null for a value that is neither. */
export function parseUserRef(value: string): UserRef | null {
  if (isUserId(value)) return { id: value }
  const email = normalizeEmail(value)
  return email === null ? null : { email }
}

/**
 * The operator on the stores that `config` opened (`tessera users`, and tests that run it beside a service): the
 * refresh-token lifetime and whether events are recorded come from the configuration.
 */
export function userAdminOn(
  stores: Pick<Stores, 'users' | 'sessions' | 'audit' | 'codes' | 'outbox' | 'factors'>,
  config: Pick<Config, 'auth' | 'audit'>,
  clock: Clock,
  webhooks?: AccountEvents,
): UserAdmin {
  return createUserAdmin({
    users: stores.users,
    sessions: stores.sessions,
    audit: stores.audit,
    codes: stores.codes,
    outbox: stores.outbox,
    factors: stores.factors,
    clock,
    refreshTokenTtlMs: config.auth.refreshTokenTtlSeconds * 1000,
    recordEvents: config.audit.retentionDays > 0,
    ...(webhooks === undefined ? {} : { webhooks }),
  })
}

/** The operations of `tessera users` on the service's stores, each recorded in the audit trail (reason operator). */
export function createUserAdmin(deps: UserAdminDeps): UserAdmin {
  const { users, sessions, audit, clock } = deps
  const operatorEvent = (type: SecurityEventType, userId: string): SecurityEvent => ({
    at: clock.now(),
    type,
    userId,
    clientAddress: null,
    requestId: null,
    reason: 'operator',
  })
  /** Runs one step; a failure becomes a OperationFailedError of `what`, with the cause. */
  const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run()
    } catch (error) {
      throw new OperationFailedError(`${what}: ${describeCause(error)}`, { cause: error })
    }
  }
  const recordEvent = async (event: SecurityEvent, done: string) => {
    if (deps.recordEvents)
      await step(`${done}, but its audit event was not written`, () => audit.append([event]))
  }
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS
  /** Queues an act's webhook events; a failure says that `done`, but not its events. */
  const announce = (done: string, queue: () => Promise<void>) =>
    step(`${done}, but its webhook events were not queued`, queue)
  /** Ends every session of the user; with webhooks, each told as a `session.ended` of `reason`. How many ended. */
  const endSessions = async (userId: string, reason: SessionEndReason, endFailed: string) => {
    if (!webhooks.enabled) return step(endFailed, () => sessions.endAll(userId, clock.now()))
    const ended = await step(endFailed, () => sessions.endAllReturningIds(userId, clock.now()))
    await announce('the sessions were ended', () => webhooks.sessionsEnded(userId, ended, reason))
    return ended.length
  }
  const deletedMeanwhile = (user: UserRecord) =>
    new OperationFailedError(`no account has the id ${user.id} (deleted meanwhile)`)
  const unchanged = (user: UserRecord): AccountChange => ({ user, changed: false, sessionsEnded: 0 })
  /**
   * After a change that took effect: records its event, then ends the user's sessions whether or not the event could
   * be written (the trail has the change even when the sessions cannot be ended; they end even when it cannot).
   */
  const recordThenEnd = async (userId: string, type: SecurityEventType, done: string, endFailed: string) => {
    const eventFailure = await recordEvent(operatorEvent(type, userId), done).then(
      () => null,
      (error: unknown) => error,
    )
    const sessionsEnded = await endSessions(userId, ENDED_BY[type] ?? 'revoked', endFailed)
    if (eventFailure !== null) throw eventFailure
    return sessionsEnded
  }

  return {
    async find(ref) {
      const user = await step('the account could not be read', () =>
        'id' in ref ? users.findById(ref.id) : users.findByEmail(ref.email),
      )
      if (user === null) {
        throw new OperationFailedError(
          'id' in ref ? `no account has the id ${ref.id}` : `no account has the e-mail ${ref.email}`,
        )
      }
      return user
    },

    list: (page) => step('the accounts could not be read', () => users.list(page)),

    async details(user) {
      const current = await step('the sessions could not be read', () => sessions.list(user.id, clock.now()))
      const factors = await step('the second factors could not be read', () => deps.factors.list(user.id))
      const expiries = current.map((session) => session.expiresAt)
      return {
        id: user.id,
        email: user.email,
        createdAt: user.createdAt,
        sessions: current.length,
        refreshTokenExpiresAt: expiries.length === 0 ? null : Math.max(...expiries),
        factors: factors
          .filter((factor) => factor.confirmed)
          .map(({ id, type, name }) => ({ id, type, name })),
      }
    },

    sessions: (user) => step('the sessions could not be read', () => sessions.list(user.id, clock.now())),

    async resetPassword(user, passwordHash) {
      await step('the password was not changed', () => users.updatePasswordHash(user.id, passwordHash))
      await endSessions(
        user.id,
        'password_reset',
        `the password was changed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      await recordEvent(operatorEvent('password_reset', user.id), 'the password was reset')
      await announce('the password was reset', () => webhooks.passwordChanged(user.id, 'operator'))
    },

    async mfaReset(user) {
      const factorsRemoved = await step('the second factors were not removed', () =>
        deps.factors.removeAll(user.id),
      )
      const sessionsEnded = await recordThenEnd(
        user.id,
        'mfa_disabled',
        'the second factors were removed',
        `the second factors were removed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      if (factorsRemoved > 0)
        await announce('the second factors were removed', () => webhooks.mfaChanged(user.id))
      return { factorsRemoved, sessionsEnded }
    },

    async revoke(user) {
      const ended = await endSessions(user.id, 'revoked', 'the sessions were not ended')
      await recordEvent(operatorEvent('sessions_revoked', user.id), 'the sessions were ended')
      return ended
    },

    async setRole(user, role) {
      if (!ROLE_NAME.test(role))
        throw new OperationFailedError('not a role name (ROLE_NAME); nothing was changed')
      if (user.role === role) return unchanged(user)
      const updatedAt = new Date(clock.now()).toISOString()
      if (!(await step('the role was not changed', () => users.setRole(user.id, role, updatedAt))))
        throw deletedMeanwhile(user)
      // the role is in the tokens of a session, refresh tokens included: the new one only comes with a new login
      const sessionsEnded = await recordThenEnd(
        user.id,
        'role_changed',
        'the role was changed',
        `the role was changed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      await announce('the role was changed', () => webhooks.updated(user.id, ['role']))
      return { user: { ...user, role, updatedAt }, changed: true, sessionsEnded }
    },

    async disable(user) {
      const endFailed = `the account is disabled, but its sessions were not ended (run tessera users disable ${user.id} again)`
      // already disabled: a disabled account keeps no session, so any left by a disable whose end failed are ended
      if (user.status === 'disabled') {
        const sessionsEnded = await endSessions(user.id, 'disabled', endFailed)
        return { user, changed: false, sessionsEnded }
      }
      const updatedAt = new Date(clock.now()).toISOString()
      if (
        !(await step('the account was not disabled', () => users.setStatus(user.id, 'disabled', updatedAt)))
      )
        throw deletedMeanwhile(user)
      // the status first, then the sessions: a login that stored its session before this end has it ended here;
      // one that stored it after reads the status again (session-starter.ts) and ends it itself
      const sessionsEnded = await recordThenEnd(
        user.id,
        'account_disabled',
        'the account was disabled',
        endFailed,
      )
      await announce('the account was disabled', () => webhooks.updated(user.id, ['status']))
      return { user: { ...user, status: 'disabled', updatedAt }, changed: true, sessionsEnded }
    },

    async enable(user) {
      if (user.status === 'active') return unchanged(user)
      const updatedAt = new Date(clock.now()).toISOString()
      if (!(await step('the account was not enabled', () => users.setStatus(user.id, 'active', updatedAt))))
        throw deletedMeanwhile(user)
      await recordEvent(operatorEvent('account_enabled', user.id), 'the account was enabled')
      await announce('the account was enabled', () => webhooks.updated(user.id, ['status']))
      return { user: { ...user, status: 'active', updatedAt }, changed: true, sessionsEnded: 0 }
    },

    async delete(user) {
      const removed = await removeAccount(deps, user, clock.now() + deps.refreshTokenTtlMs, (failure) => {
        const { cause } = failure
        if (failure.stage === 'retire')
          throw new OperationFailedError(`the account was not deleted: ${describeCause(cause)}`, { cause })
        const state = failure.reinstated
          ? 'the user was logged out'
          : 'the user was logged out and cannot log in until the deletion is run again'
        throw new OperationFailedError(`the account was not deleted (${state}): ${describeCause(cause)}`, {
          cause,
        })
      })
      if (!removed) throw deletedMeanwhile(user)
      const addressesErased = await step(
        'the account was deleted, but the client addresses of its audit events were not erased',
        () => audit.eraseClientAddresses(user.id),
      )
      await recordEvent(operatorEvent('account_deleted', user.id), 'the account was deleted')
      return { addressesErased }
    },
  }
}
