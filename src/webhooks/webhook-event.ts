import type { AccountEvent } from '../auth/account-events.js'
import { accountView } from '../auth/account-view.js'

/**
 * An event for the application (docs/api.md §6.5): an account's (AccountEvent), or `ping` (`tessera webhooks test`:
 * nothing happened, the receiver is being tried). webhookBody writes what is posted.
 */
export type WebhookEvent = AccountEvent | { type: 'ping' }

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
