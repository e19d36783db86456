import type { Clock } from '../clock.js'
import { describeCause, OperationFailedError } from '../errors.js'
import type { SecurityEvent, SecurityEventType } from '../security-event.js'
import type { AuditStore, RefreshTokenStore, UserRecord, UserStore } from '../storage/stores.js'
import { normalizeEmail } from './email.js'
import { isUserId } from './user-id.js'

/** A user named on the command line: by id (10 digits) or by e-mail address. */
export type UserRef = { id: string } | { email: string }

/** `tessera users show`: the account, never its password hash, and its stored refresh token's expiry. */
export interface UserDetails {
  id: string
  email: string
  createdAt: string
  /** When the stored refresh token expires (epoch ms); null when none is stored. */
  refreshTokenExpiresAt: number | null
}

export interface UserAdminDeps {
  users: UserStore
  refreshTokens: RefreshTokenStore
  audit: AuditStore
  clock: Clock
  /** The refresh-token lifetime: how long a deleted account's user is kept retired (RefreshTokenStore.retire). */
  refreshTokenTtlMs: number
  /** False when AUDIT_RETENTION_DAYS is 0, which keeps no trail: no event is appended (addresses are still erased). */
  recordEvents: boolean
}

export interface UserAdmin {
  /** The account named by `ref`; OperationFailedError when there is none. */
  find(ref: UserRef): Promise<UserRecord>
  /** A page of accounts in id order (UserStore.list). */
  list(page: { after?: string; limit: number }): Promise<UserRecord[]>
  details(user: UserRecord): Promise<UserDetails>
  /** Replaces the password hash, revokes the stored refresh token and records `password_reset`. */
  resetPassword(user: UserRecord, passwordHash: string): Promise<void>
  /** Deletes the stored refresh token and records `sessions_revoked`. */
  revoke(user: UserRecord): Promise<void>
  /**
   * Deletes the account and its refresh token, erases the client addresses of its audit events (which are kept
   * until the retention prunes them) and records `account_deleted`. Resolves with how many events lost their address.
   */
  delete(user: UserRecord): Promise<{ addressesErased: number }>
}

/** `<email|id>` of the command line; null for a value that is neither. */
export function parseUserRef(value: string): UserRef | null {
  if (isUserId(value)) return { id: value }
  const email = normalizeEmail(value)
  return email === null ? null : { email }
}

/** The operations of `tessera users` on the service's stores, each recorded in the audit trail (reason operator). */
export function createUserAdmin(deps: UserAdminDeps): UserAdmin {
  const { users, refreshTokens, audit, clock } = deps
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
      const refreshTokenExpiresAt = await step('the refresh token could not be read', () =>
        refreshTokens.currentExpiry(user.id, clock.now()),
      )
      return { id: user.id, email: user.email, createdAt: user.createdAt, refreshTokenExpiresAt }
    },

    async resetPassword(user, passwordHash) {
      await step('the password was not changed', () => users.updatePasswordHash(user.id, passwordHash))
      await step(
        `the password was changed, but the refresh token was not revoked (run tessera users revoke ${user.id})`,
        () => refreshTokens.delete(user.id),
      )
      await recordEvent(operatorEvent('password_reset', user.id), 'the password was reset')
    },

    async revoke(user) {
      await step('the refresh token was not revoked', () => refreshTokens.delete(user.id))
      await recordEvent(operatorEvent('sessions_revoked', user.id), 'the refresh token was revoked')
    },

    async delete(user) {
      // first: no refresh token is left and none can be stored, even by a login that has already read the account
      await step('the account was not deleted', () =>
        refreshTokens.retire(user.id, clock.now() + deps.refreshTokenTtlMs),
      )
      let deleted: boolean
      try {
        deleted = await users.delete(user.id)
      } catch (error) {
        const reinstated = await refreshTokens.reinstate(user.id).then(
          () => true,
          () => false,
        )
        const state = reinstated
          ? 'the user was logged out'
          : 'the user was logged out and cannot log in until the deletion is run again'
        throw new OperationFailedError(`the account was not deleted (${state}): ${describeCause(error)}`, {
          cause: error,
        })
      }
      if (!deleted) throw new OperationFailedError(`no account has the id ${user.id} (deleted meanwhile)`)
      const addressesErased = await step(
        'the account was deleted, but the client addresses of its audit events were not erased',
        () => audit.eraseClientAddresses(user.id),
      )
      await recordEvent(operatorEvent('account_deleted', user.id), 'the account was deleted')
      return { addressesErased }
    },
  }
}
