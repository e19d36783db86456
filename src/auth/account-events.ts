import type { NewOutboxMessage } from '../storage/stores.js'
import type { Account } from './account.js'

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
 * What happened to an account, for the application beside the service (docs/api.md §6.5: the webhooks post it), in
 * the domain's words; src/webhooks/webhook-event.ts writes the body that is posted. Each names what happened, never a
 * password hash, a code or a token: an account is its public view.
 */
export type AccountEvent =
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

/**
 * Where the account flows publish their events (src/webhooks/webhook-publisher.ts implements it; the domain does not
 * know the transport). Declared here, by its consumers, so that the account flows depend on no webhook module.
 */
export interface AccountEventPublisher {
  /**
   * Queues `events` durably, all or none, and resolves once they are stored: called after the change an event reports
   * was made and before the answer that says it was. A failure to queue rejects with WriteOutcomeUnknownError (503
   * `write_outcome_unknown`, docs/api.md R7.3). Resolves at once when there is nowhere to send them.
   */
  publish(events: readonly AccountEvent[]): Promise<void>
  /**
   * The outbox messages that publish would store, for a store write that commits them in the transaction of the
   * change itself (where the store allows it). Once that write resolved, pass them to queued().
   */
  messages(events: readonly AccountEvent[]): NewOutboxMessage[]
  /** Messages of messages() were committed with a change: counted, and the sender woken. */
  queued(messages: readonly NewOutboxMessage[]): void
}
