import type { AuditPage, AuditReader } from '../audit/audit-reader.js'
import type { AccountChange, Actor, UserAdmin, UserDetails } from '../auth/user-admin.js'
import { isUserId } from '../auth/user-id.js'
import { UserNotFoundError } from '../errors.js'
import type { Caller } from '../sessions/caller.js'
import type {
  AccountStatus,
  AuditPageQuery,
  AuditPosition,
  StoredAuditEvent,
  UserRecord,
} from '../storage/stores.js'
import type { AdminGuard } from './admin-guard.js'

/** How many of an account's events GET /admin/users/<id> shows, the latest (docs/api.md R4.27.4). */
export const RECENT_EVENTS = 20

/** An account as GET /admin/users/<id> shows it: the account, its sessions and factors, and its latest events. */
export interface AdminUserView extends UserDetails {
  user: UserRecord
  /** Its RECENT_EVENTS latest audit events, newest first. */
  events: StoredAuditEvent[]
}

/** A page of accounts in id order, and where the next one starts (an opaque cursor; null when none follows). */
export interface AdminUserPage {
  users: UserRecord[]
  next: string | null
}

/**
 * The admin API (docs/api.md §4.27): the HTTP face of `tessera users` and `tessera audit`, through the same code
 * (auth/user-admin.ts, audit/audit-reader.ts). Every change is made by the user admin as `by`, the admin who asked.
 */
export interface AdminService {
  /** The caller's account when it may use the admin API (AdminGuard); throws the 401 or 403 otherwise. */
  authorize(caller: Caller): Promise<UserRecord>
  /** Accounts in id order, those whose e-mail or username starts with `prefix` (any case) when it is not empty. */
  users(query: { prefix: string; after?: string; limit: number }): Promise<AdminUserPage>
  /** UserNotFoundError when no account has the id. */
  user(id: string): Promise<AdminUserView>
  /** Sets the role, then the status, each when given; UserNotFoundError, AdminSelfError or LastAdminError. */
  update(id: string, changes: { role?: string; status?: AccountStatus }, by: Actor): Promise<AccountChange>
  /** Ends every session of the account: how many. */
  revoke(id: string, by: Actor): Promise<number>
  /** Removes every second factor of the account and ends its sessions. */
  mfaReset(id: string, by: Actor): Promise<{ factorsRemoved: number; sessionsEnded: number }>
  delete(id: string, by: Actor): Promise<void>
  /** A page of the audit trail, newest first. */
  audit(query: AuditPageQuery): Promise<AuditPage>
  /** Where the `next` of an audit page says the next one starts; null for a text that is no such cursor. */
  cursor(text: string): AuditPosition | null
}

export interface AdminServiceDeps {
  guard: AdminGuard
  /** The user admin of the service: failures `http`, events to the audit sink. */
  users: UserAdmin
  audit: AuditReader
}

export function createAdminService(deps: AdminServiceDeps): AdminService {
  const { users, audit } = deps
  /** The account of `id`; a text that is no user id names none. */
  const account = (id: string) => {
    if (!isUserId(id)) return Promise.reject(new UserNotFoundError())
    return users.find({ id })
  }
  return {
    authorize: deps.guard,

    async users({ prefix, after, limit }) {
      // one more than asked tells whether another page follows; the cursor is the last id of the page
      const found = await users.list({ after, limit: limit + 1, prefix: prefix.toLowerCase() })
      const page = found.slice(0, limit)
      return { users: page, next: found.length > limit ? (page.at(-1)?.id ?? null) : null }
    },

    async user(id) {
      const user = await account(id)
      const [details, { events }] = await Promise.all([
        users.details(user),
        audit.page({ userId: user.id, limit: RECENT_EVENTS }),
      ])
      return { user, ...details, events }
    },

    async update(id, { role, status }, by) {
      let user = await account(id)
      let changed = false
      let sessionsEnded = 0
      const apply = (change: AccountChange) => {
        user = change.user
        changed ||= change.changed
        sessionsEnded += change.sessionsEnded
      }
      if (role !== undefined) apply(await users.setRole(user, role, by))
      if (status === 'disabled') apply(await users.disable(user, by))
      else if (status === 'active') apply(await users.enable(user, by))
      return { user, changed, sessionsEnded }
    },

    async revoke(id, by) {
      return users.revoke(await account(id), by)
    },

    async mfaReset(id, by) {
      return users.mfaReset(await account(id), by)
    },

    async delete(id, by) {
      await users.delete(await account(id), by)
    },

    audit: (query) => audit.page(query),

    cursor: (text) => audit.cursor(text),
  }
}
