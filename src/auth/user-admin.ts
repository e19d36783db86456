import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import {
  AdminSelfError,
  describeCause,
  LastAdminError,
  OperationFailedError,
  UserNotFoundError,
} from '../errors.js'
import type { RequestContext, SecurityEvent, SecurityEventType } from '../security-event.js'
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

/**
 * Who acts on an account: the operator with a shell (`tessera users`: reason `operator`, held to no last-admin rule),
 * or an admin through the admin API (docs/api.md §4.27: reason `admin`, the admin's id as the event's actor, and the
 * self and last-admin rules of R4.27.6 and R4.27.7).
 */
export type Actor = { kind: 'operator' } | { kind: 'admin'; id: string; context: RequestContext }

export const OPERATOR: Actor = Object.freeze({ kind: 'operator' })

/** A confirmed second factor of an account, as `show` and GET /admin/users/<id> list it. */
export interface FactorSummary {
  id: string
  type: FactorType
  name: string
  /** Epoch milliseconds. */
  createdAt: number
}

/** `tessera users show` and GET /admin/users/<id>: the account's sessions and second factors. */
export interface UserDetails {
  /** Its unexpired sessions, most recently used first. */
  sessions: StoredSession[]
  /** Its confirmed second factors (docs/api.md §4.25), oldest first. */
  factors: FactorSummary[]
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
  /** The trail whose client addresses a deletion erases. */
  audit: Pick<AuditStore, 'eraseClientAddresses'>
  /** The account's codes and queued mail go with it (docs/api.md R6.4.6). */
  codes: Pick<EmailCodeStore, 'deleteFor'>
  outbox: Pick<OutboxStore, 'deleteFor'>
  /** The second factors `show` lists and `mfa-reset` removes (docs/api.md §4.25). */
  factors: Pick<FactorStore, 'list' | 'removeAll'>
  clock: Clock
  /** The refresh-token lifetime: how long a deleted account's user is kept retired (SessionStore.retire). */
  refreshTokenTtlMs: number
  /**
   * Where the event of each act goes: appended to the trail before the command answers (`tessera users`, nothing when
   * AUDIT_RETENTION_DAYS is 0), or handed to the service's audit sink (the admin API, docs/api.md R6.3.3).
   */
  record(event: SecurityEvent): Promise<void>
  /** ADMIN_ROLE: the role whose last active account an admin cannot take away (docs/api.md R4.27.7). */
  adminRole: string
  /**
   * How a failure is told: `shell`, an OperationFailedError whose message says what was done and what was not (the
   * command prints it); `http`, the store's own error and UserNotFoundError for an account deleted meanwhile, which
   * the HTTP layer answers (docs/api.md §7).
   */
  failures: 'shell' | 'http'
  /**
   * The webhook events of each act (docs/api.md R6.5.9 to R6.5.12), queued before it resolves, `user.deleted` in the
   * deletion's own transaction (removeAccount); absent, none.
   */
  webhooks?: AccountEvents
}

export interface UserAdmin {
  /** The account named by `ref`; OperationFailedError (UserNotFoundError for `http`) when there is none. */
  find(ref: UserRef): Promise<UserRecord>
  /**
   * A page of accounts in id order (UserStore.list): after the id `after`, and with `prefix` those whose e-mail or
   * username starts with it, whatever its case.
   */
  list(page: { after?: string; limit: number; prefix?: string }): Promise<UserRecord[]>
  details(user: UserRecord): Promise<UserDetails>
  /** The user's unexpired sessions, most recently used first (`tessera users sessions`). */
  sessions(user: UserRecord): Promise<StoredSession[]>
  /** How many active accounts have ADMIN_ROLE: what `tessera users` warns about when it took the last one away. */
  activeAdmins(): Promise<number>
  /** Replaces the password hash, ends every session of the user and records `password_reset`. */
  resetPassword(user: UserRecord, passwordHash: string): Promise<void>
  /**
   * Removes every second factor and recovery code of the account (a lost phone), records `mfa_disabled`, and ends
   * every session; resolves with how many factors and sessions there were.
   */
  mfaReset(user: UserRecord, by?: Actor): Promise<{ factorsRemoved: number; sessionsEnded: number }>
  /** Ends every session of the user and records `sessions_revoked`; resolves with how many there were. */
  revoke(user: UserRecord, by?: Actor): Promise<number>
  /**
   * Gives the account the role `role` (ROLE_NAME), records `role_changed` and ends every session: its tokens carry
   * the role from its next login. Nothing at all when it already has that role. An admin cannot demote themself
   * (AdminSelfError) nor the last active admin (LastAdminError).
   */
  setRole(user: UserRecord, role: string, by?: Actor): Promise<AccountChange>
  /**
   * Disables the account, records `account_disabled`, then ends every session. When it is already disabled, only
   * the sessions are ended (normally none: this finishes a disable whose end of the sessions failed). An admin cannot
   * disable themself nor the last active admin.
   */
  disable(user: UserRecord, by?: Actor): Promise<AccountChange>
  /** Enables the account again and records `account_enabled`; nothing when it is active. */
  enable(user: UserRecord, by?: Actor): Promise<AccountChange>
  /**
   * Deletes the account and its sessions, erases the client addresses of its audit events (which are kept
   * until the retention prunes them) and records `account_deleted`. Resolves with how many events lost their address.
   * An admin cannot delete themself nor the last active admin.
   */
  delete(user: UserRecord, by?: Actor): Promise<{ addressesErased: number }>
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
 * refresh-token lifetime, whether events are recorded and ADMIN_ROLE come from the configuration; each event is
 * appended to the trail before the command answers.
 */
export function userAdminOn(
  stores: Pick<Stores, 'users' | 'sessions' | 'audit' | 'codes' | 'outbox' | 'factors'>,
  config: Pick<Config, 'auth' | 'audit' | 'admin'>,
  clock: Clock,
  webhooks?: AccountEvents,
): UserAdmin {
  const recordEvents = config.audit.retentionDays > 0
  return createUserAdmin({
    users: stores.users,
    sessions: stores.sessions,
    audit: stores.audit,
    codes: stores.codes,
    outbox: stores.outbox,
    factors: stores.factors,
    clock,
    refreshTokenTtlMs: config.auth.refreshTokenTtlSeconds * 1000,
    record: (event) => (recordEvents ? stores.audit.append([event]) : Promise.resolve()),
    adminRole: config.admin.role,
    failures: 'shell',
    ...(webhooks === undefined ? {} : { webhooks }),
  })
}

/**
 * The operations of `tessera users` and of the admin API (docs/api.md §4.27) on the service's stores, each recorded in
 * the audit trail: reason `operator` for the shell's, `admin` with the admin as the actor for the API's. Every change
 * of an account by either goes through here.
 */
export function createUserAdmin(deps: UserAdminDeps): UserAdmin {
  const { users, sessions, audit, clock, adminRole } = deps
  const shell = deps.failures === 'shell'
  const eventOf = (type: SecurityEventType, userId: string, by: Actor): SecurityEvent =>
    by.kind === 'admin'
      ? {
          at: clock.now(),
          type,
          userId,
          clientAddress: by.context.clientAddress,
          requestId: by.context.requestId,
          reason: 'admin',
          actor: by.id,
        }
      : { at: clock.now(), type, userId, clientAddress: null, requestId: null, reason: 'operator' }
  /** Runs one step; for the shell, a failure becomes an OperationFailedError of `what`, with the cause. */
  const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    if (!shell) return run()
    try {
      return await run()
    } catch (error) {
      throw new OperationFailedError(`${what}: ${describeCause(error)}`, { cause: error })
    }
  }
  const recordEvent = (event: SecurityEvent, done: string) =>
    step(`${done}, but its audit event was not written`, () => deps.record(event))
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS
  /** Queues an act's webhook events; for the shell, a failure says that `done`, but not its events. */
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
    shell
      ? new OperationFailedError(`no account has the id ${user.id} (deleted meanwhile)`)
      : new UserNotFoundError()
  const unchanged = (user: UserRecord): AccountChange => ({ user, changed: false, sessionsEnded: 0 })
  /** The role an admin's writes keep (docs/api.md R4.27.7); the shell's keep none (R4.27.8). */
  const keepFor = (by: Actor) => (by.kind === 'admin' ? adminRole : undefined)
  /** docs/api.md R4.27.6: an admin does not demote, disable or delete their own account. */
  const refuseSelf = (user: UserRecord, by: Actor) => {
    if (by.kind === 'admin' && by.id === user.id) throw new AdminSelfError()
  }
  /**
   * A conditional write that changed nothing: the account is gone (deleted meanwhile), or a write of the last-admin
   * rule found it the last active admin (LastAdminError), unless it reads as `done` by now (the same change, made
   * meanwhile by another request): then null, and the caller answers it unchanged.
   */
  const notWritten = async (user: UserRecord, by: Actor, done: (current: UserRecord) => boolean) => {
    const current = await step('the account could not be read again', () => users.findById(user.id))
    if (current === null || keepFor(by) === undefined) throw deletedMeanwhile(user)
    if (done(current)) return current
    throw new LastAdminError()
  }
  /**
   * After a change that took effect: records its event, then ends the user's sessions whether or not the event could
   * be written (the trail has the change even when the sessions cannot be ended; they end even when it cannot).
   */
  const recordThenEnd = async (
    userId: string,
    event: SecurityEvent,
    done: string,
    endFailed: string,
  ): Promise<number> => {
    const eventFailure = await recordEvent(event, done).then(
      () => null,
      (error: unknown) => error,
    )
    const sessionsEnded = await endSessions(userId, ENDED_BY[event.type] ?? 'revoked', endFailed)
    if (eventFailure !== null) throw eventFailure
    return sessionsEnded
  }

  return {
    async find(ref) {
      const user = await step('the account could not be read', () =>
        'id' in ref ? users.findById(ref.id) : users.findByEmail(ref.email),
      )
      if (user !== null) return user
      if (!shell) throw new UserNotFoundError()
      throw new OperationFailedError(
        'id' in ref ? `no account has the id ${ref.id}` : `no account has the e-mail ${ref.email}`,
      )
    },

    list: (page) => step('the accounts could not be read', () => users.list(page)),

    async details(user) {
      const current = await step('the sessions could not be read', () => sessions.list(user.id, clock.now()))
      const factors = await step('the second factors could not be read', () => deps.factors.list(user.id))
      return {
        sessions: current,
        factors: factors
          .filter((factor) => factor.confirmed)
          .map(({ id, type, name, createdAt }) => ({ id, type, name, createdAt })),
      }
    },

    sessions: (user) => step('the sessions could not be read', () => sessions.list(user.id, clock.now())),

    activeAdmins: () => step('the admins could not be counted', () => users.countActive(adminRole)),

    async resetPassword(user, passwordHash) {
      await step('the password was not changed', () => users.updatePasswordHash(user.id, passwordHash))
      await endSessions(
        user.id,
        'password_reset',
        `the password was changed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      await recordEvent(eventOf('password_reset', user.id, OPERATOR), 'the password was reset')
      await announce('the password was reset', () => webhooks.passwordChanged(user.id, 'operator'))
    },

    async mfaReset(user, by = OPERATOR) {
      const factorsRemoved = await step('the second factors were not removed', () =>
        deps.factors.removeAll(user.id),
      )
      const sessionsEnded = await recordThenEnd(
        user.id,
        eventOf('mfa_disabled', user.id, by),
        'the second factors were removed',
        `the second factors were removed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      if (factorsRemoved > 0)
        await announce('the second factors were removed', () => webhooks.mfaChanged(user.id))
      return { factorsRemoved, sessionsEnded }
    },

    async revoke(user, by = OPERATOR) {
      const ended = await endSessions(user.id, 'revoked', 'the sessions were not ended')
      await recordEvent(eventOf('sessions_revoked', user.id, by), 'the sessions were ended')
      return ended
    },

    async setRole(user, role, by = OPERATOR) {
      if (!ROLE_NAME.test(role))
        throw new OperationFailedError('not a role name (ROLE_NAME); nothing was changed')
      if (user.role === role) return unchanged(user)
      refuseSelf(user, by)
      const updatedAt = new Date(clock.now()).toISOString()
      if (
        !(await step('the role was not changed', () => users.setRole(user.id, role, updatedAt, keepFor(by))))
      )
        return unchanged(await notWritten(user, by, (current) => current.role === role))
      // the role is in the tokens of a session, refresh tokens included: the new one only comes with a new login
      const sessionsEnded = await recordThenEnd(
        user.id,
        eventOf('role_changed', user.id, by),
        'the role was changed',
        `the role was changed, but the sessions were not ended (run tessera users revoke ${user.id})`,
      )
      await announce('the role was changed', () => webhooks.updated(user.id, ['role']))
      return { user: { ...user, role, updatedAt }, changed: true, sessionsEnded }
    },

    async disable(user, by = OPERATOR) {
      const endFailed = `the account is disabled, but its sessions were not ended (run tessera users disable ${user.id} again)`
      refuseSelf(user, by)
      // already disabled: a disabled account keeps no session, so any left by a disable whose end failed are ended
      const endRemaining = async (current: UserRecord): Promise<AccountChange> => {
        const sessionsEnded = await endSessions(user.id, 'disabled', endFailed)
        return { user: current, changed: false, sessionsEnded }
      }
      if (user.status === 'disabled') return endRemaining(user)
      const updatedAt = new Date(clock.now()).toISOString()
      if (
        !(await step('the account was not disabled', () =>
          users.setStatus(user.id, 'disabled', updatedAt, keepFor(by)),
        ))
      )
        return endRemaining(await notWritten(user, by, (current) => current.status === 'disabled'))
      // the status first, then the sessions: a login that stored its session before this end has it ended here;
      // one that stored it after reads the status again (session-starter.ts) and ends it itself
      const sessionsEnded = await recordThenEnd(
        user.id,
        eventOf('account_disabled', user.id, by),
        'the account was disabled',
        endFailed,
      )
      await announce('the account was disabled', () => webhooks.updated(user.id, ['status']))
      return { user: { ...user, status: 'disabled', updatedAt }, changed: true, sessionsEnded }
    },

    async enable(user, by = OPERATOR) {
      if (user.status === 'active') return unchanged(user)
      const updatedAt = new Date(clock.now()).toISOString()
      if (!(await step('the account was not enabled', () => users.setStatus(user.id, 'active', updatedAt))))
        throw deletedMeanwhile(user)
      await recordEvent(eventOf('account_enabled', user.id, by), 'the account was enabled')
      await announce('the account was enabled', () => webhooks.updated(user.id, ['status']))
      return { user: { ...user, status: 'active', updatedAt }, changed: true, sessionsEnded: 0 }
    },

    async delete(user, by = OPERATOR) {
      refuseSelf(user, by)
      const keep = keepFor(by)
      // the last active admin is refused before its sessions are ended; the deletion's own condition (KeepRole) is
      // what holds the rule against a concurrent change, and undoes the retirement when it refuses
      if (
        keep !== undefined &&
        user.role === keep &&
        user.status === 'active' &&
        (await users.countActive(keep)) <= 1
      )
        throw new LastAdminError()
      const stores = {
        ...deps,
        users: {
          delete: (id: string, options: Parameters<typeof users.delete>[1]) =>
            users.delete(id, { ...options, keep }),
        },
      }
      const removed = await removeAccount(stores, user, clock.now() + deps.refreshTokenTtlMs, (failure) => {
        const { cause } = failure
        if (!shell) throw cause
        if (failure.stage === 'retire')
          throw new OperationFailedError(`the account was not deleted: ${describeCause(cause)}`, { cause })
        const state = failure.reinstated
          ? 'the user was logged out'
          : 'the user was logged out and cannot log in until the deletion is run again'
        throw new OperationFailedError(`the account was not deleted (${state}): ${describeCause(cause)}`, {
          cause,
        })
      })
      if (!removed) {
        if (keep !== undefined && (await users.findById(user.id)) !== null) {
          // refused as the last active admin by the time it was deleted: it may log in again
          await sessions.reinstate(user.id)
          throw new LastAdminError()
        }
        throw deletedMeanwhile(user)
      }
      const addressesErased = await step(
        'the account was deleted, but the client addresses of its audit events were not erased',
        () => audit.eraseClientAddresses(user.id),
      )
      await recordEvent(eventOf('account_deleted', user.id, by), 'the account was deleted')
      return { addressesErased }
    },
  }
}
