import type { Account } from '../auth/account.js'
import { accountView } from '../auth/account-view.js'

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
  /** An account's password was set, changed or reset. */
  | { type: 'user.password_changed'; userId: string }
  /** An account's second factors changed: one added, removed, or all reset. */
  | { type: 'user.mfa_changed'; userId: string }
  /** A session ended before its time: `reason` says why, in one word (`logout`, `revoked`, `reuse_detected`…). */
  | { type: 'session.ended'; userId: string; sessionId: string; reason: string }
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
    case 'user.mfa_changed':
      return { user_id: event.userId }
    case 'session.ended':
      return { user_id: event.userId, session_id: event.sessionId, reason: event.reason }
    case 'ping':
      return {}
  }
}
