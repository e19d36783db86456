import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { SessionService } from '../sessions/session-service.js'
import type { FactorStore, ProviderLinkStore, UserRecord, UserStore } from '../storage/stores.js'
import { type AccountEvents, NO_ACCOUNT_EVENTS } from './account-events.js'

export interface AddressClaimDeps {
  users: Pick<UserStore, 'claimAddress'>
  providerLinks: Pick<ProviderLinkStore, 'unlinkAll'>
  /** The second factors and recovery codes an impostor may have enrolled (docs/api.md §4.25). */
  factors: Pick<FactorStore, 'removeAll'>
  sessions: Pick<SessionService, 'endAccountSessions'>
  record: RecordSecurityEvent
  log: { warn(fields: Record<string, unknown>, message: string): void }
  /** The webhook events of what the claim changed (docs/api.md R6.5.9); absent, none. */
  webhooks?: AccountEvents
}

/**
 * docs/api.md §4.15, "an impostor's setup ends": the address of an unverified account was proved by someone not
 * signed in to it (a code sent there, or a provider that vouches for it). Whoever registered it before may not be its
 * owner: their sessions end and their password stops working, the password in the one statement of claimAddress (so
 * a login cannot slip between the two), and the providers linked before stop signing in to it (an impostor may have
 * made the account through a provider that did not vouch for the address), and so do its second factors and recovery
 * codes, so that an impostor's factor never locks the owner out (docs/api.md §4.25). An account already verified is left
 * alone. Resolves with the account as it is now.
 */
export async function claimUnverifiedAddress(
  deps: AddressClaimDeps,
  user: UserRecord,
  context: RequestContext,
): Promise<UserRecord> {
  if (user.emailVerified) return user
  if (!(await deps.users.claimAddress(user.id))) return { ...user, emailVerified: true }
  await deps.providerLinks.unlinkAll(user.id)
  const factorsRemoved = (await deps.factors.removeAll(user.id)) > 0
  if (factorsRemoved) deps.record('mfa_disabled', user.id, context, 'claimed')
  // the address is proved from here on, whatever becomes of the rest
  deps.record('email_verified', user.id, context, 'claimed')
  await deps.sessions.endAccountSessions(user.id, null, 'address_claimed')
  deps.log.warn(
    { event: 'email_verified', reason: 'claimed', userId: user.id },
    'an unverified address was proved: the sessions, password, provider links and second factors set before were ended',
  )
  const webhooks = deps.webhooks ?? NO_ACCOUNT_EVENTS
  await webhooks.updated(
    user.id,
    user.providers.length > 0 ? ['verification', 'providers'] : ['verification'],
  )
  if (user.passwordHash !== null) await webhooks.passwordChanged(user.id, 'claimed')
  if (factorsRemoved) await webhooks.mfaChanged(user.id)
  return { ...user, emailVerified: true, passwordHash: null, providers: [] }
}
