import { AccessTokenInvalidError, ForbiddenError, SecondFactorRequiredError } from '../errors.js'
import type { Caller, SessionService } from '../sessions/session-service.js'
import type { FactorStore, UserRecord, UserStore } from '../storage/stores.js'

export interface AdminGuardDeps {
  /** The caller's session, which must still exist (R5.3.1), and whether a second factor established it. */
  sessions: Pick<SessionService, 'live'>
  users: Pick<UserStore, 'findById'>
  factors: Pick<FactorStore, 'list'>
  /** ADMIN_ROLE. */
  role: string
  /** ADMIN_REQUIRE_MFA. */
  requireSecondFactor: boolean
}

/** Resolves with the caller's account when it may use the admin API; throws the refusal otherwise. */
export type AdminGuard = (caller: Caller) => Promise<UserRecord>

/**
 * docs/api.md R4.27.2 and R4.27.3, at every request to an admin endpoint, reads included: the access token's session
 * must still exist (else 401, whatever ended it), and the account as stored now, not the token's `role` claim, must be
 * active and have ADMIN_ROLE (else 403 `Forbidden`), so that an admin demoted, disabled or logged out reads nothing
 * more, on every instance. With ADMIN_REQUIRE_MFA the session must have been established with a second factor, and
 * the account must have a confirmed one still (else 403 `Second factor required`).
 */
export function createAdminGuard(deps: AdminGuardDeps): AdminGuard {
  const { sessions, users, factors, role, requireSecondFactor } = deps
  return async (caller) => {
    // both reads at once: the session's end and the account's role are each reason enough to refuse
    const [session, user] = await Promise.all([sessions.live(caller), users.findById(caller.userId)])
    if (user === null) throw new AccessTokenInvalidError()
    if (user.role !== role || user.status !== 'active') throw new ForbiddenError()
    if (!requireSecondFactor) return user
    if (!session.secondFactor) throw new SecondFactorRequiredError()
    // a session established with a factor the account no longer has (it removed its last one) does not count
    if (!(await factors.list(user.id)).some((factor) => factor.confirmed))
      throw new SecondFactorRequiredError()
    return user
  }
}
