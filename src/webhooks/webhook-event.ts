import type { Account } from '../auth/account.js'
import { accountView } from '../auth/account-view.js'
import type { FactorType } from '../storage/stores.js'

/** The names of the fields of an account whose change a `user.updated` event lists (`data.changes`). */
export const ACCOUNT_CHANGES = [
  'email',
  'verification',
  'profile',
  'avatar',
  'providers',
  'role',
  'status',
] as const
export type AccountChange = (typeof ACCOUNT_CHANGES)[number]

/**
 * How a password changed (`user.password_changed`'s `data.reason`): `changed` by its owner (POST
 * /auth/password/change), `reset` with a code or reset key (POST /auth/password/reset), `operator` by `tessera users
 * reset-password`, `claimed`: the password set before the address was proved by someone not signed in ended (§4.15).
 */
export type PasswordChange = 'changed' | 'reset' | 'operator' | 'claimed'

/**
 * Why a session ended (`session.ended`'s `data.reason`, docs/api.md R6.5.10): a logout of the session itself, of the
 * caller's others or of all (`?scope=`), a session removed from the list (DELETE /auth/sessions/<id>), revoked by an
 * operator or an admin, ended by a password change or reset, a role change, a disable, a change of the second
 * factors, the proof of an impostor's address, or the reuse of a rotated refresh token.
 */
export const SESSION_END_REASONS = [
  'logout',
  'logout_others',
  'logout_all',
  'removed',
  'revoked',
  'password_changed',
  'password_reset',
  'role_changed',
  'disabled',
  'mfa_changed',
  'address_claimed',
  'reuse_detected',
] as const
export type SessionEndReason = (typeof SESSION_END_REASONS)[number]

/**
 * An event for the application (docs/api.md §6.5), as the service publishes it; webhookBody writes what is posted.
 * Each names what happened, never a password hash, a code or a token: an account is its public view (accountView).
 */
export type WebhookEvent =
  /** An account was made: registration, a provider sign-in, an operator. */
  | { type: 'user.created'; user: Account }
  /** An account changed: `changes` names the fields (at least one). */
  | { type: 'user.updated'; user: Account; changes: readonly AccountChange[] }
  /** An account was deleted. */
  | { type: 'user.deleted'; user: Pick<Account, 'id' | 'email'> }
  /** An account's password was changed, reset, or ended by the proof of an impostor's address. */
  | { type: 'user.password_changed'; userId: string; reason: PasswordChange }
  /** An account's second factors changed: one added, removed, or all reset; `factors`, the kinds it has now. */
  | { type: 'user.mfa_changed'; userId: string; factors: readonly FactorType[] }
  /** A session ended before its time: `reason` says why. */
  | { type: 'session.ended'; userId: string; sessionId: string; reason: SessionEndReason }
  /** `tessera webhooks test`: nothing happened, the receiver is being tried. */
  | { type: 'ping' }

export type WebhookEventType = WebhookEvent['type']

/** Every event type, `ping` included. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'user.created',
  'user.updated',
  'user.deleted',
  'user.password_changed',
  'user.mfa_changed',
  'session.ended',
  'ping',
]

/**
 * The JSON body posted for `event` (docs/api.md §6.5): `{type, timestamp, data}`, `timestamp` when it happened (ISO
 * 8601 UTC with milliseconds), `data` in the API's own words (snake_case; an account as GET /auth/me shows it, its
 * avatar's path under `basePath`). The same text on every attempt: it is what the signature covers.
 */
export function webhookBody(event: WebhookEvent, occurredAt: number, basePath: string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(occurredAt).toISOString(),
    data: eventData(event, basePath),
  })
}

function eventData(event: WebhookEvent, basePath: string): Record<string, unknown> {
  switch (event.type) {
    case 'user.created':
      return { user: accountView(event.user, basePath) }
    case 'user.updated':
      return { user: accountView(event.user, basePath), changes: [...event.changes] }
    case 'user.deleted':
      return { user: { id: event.user.id, email: event.user.email } }
    case 'user.password_changed':
      return { user_id: event.userId, reason: event.reason }
    case 'user.mfa_changed':
      return { user_id: event.userId, factors: [...event.factors] }
    case 'session.ended':
      return { user_id: event.userId, session_id: event.sessionId, reason: event.reason }
    case 'ping':
      return {}
  }
}
