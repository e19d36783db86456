import type { SessionEndReason } from '../sessions/session-end-reason.js'
import type { FactorStore, FactorType, NewOutboxMessage, UserStore } from '../storage/stores.js'
import type { Account } from './account.js'
import { toAccount } from './account.js'

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
 * How a password changed (`user.password_changed`'s `data.reason`, docs/api.md R6.5.11): `changed` by its owner
 * (POST /auth/password/change), `reset` with a code or reset key (POST /auth/password/reset), `operator` by `tessera
 * users reset-password`, `claimed`: the password set before the address was proved by someone not signed in ended
 * (§4.15).
 */
export type PasswordChange = 'changed' | 'reset' | 'operator' | 'claimed'

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
  /** An account's password was changed, reset, or ended by the proof of an impostor's address. */
  | { type: 'user.password_changed'; userId: string; reason: PasswordChange }
  /** An account's second factors changed: one added, removed, or all reset; `factors`, the kinds it has now. */
  | { type: 'user.mfa_changed'; userId: string; factors: readonly FactorType[] }
  /** A session ended before its time: `reason` says why. */
  | { type: 'session.ended'; userId: string; sessionId: string; reason: SessionEndReason }

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

/**
 * The webhook events of the changes of an account (docs/api.md §6.5, R6.5.9 to R6.5.12), for the flows that make
 * them. Each method queues its events and resolves once they are stored: a flow awaits it after its change and before
 * its answer, and a failure to queue rejects with WriteOutcomeUnknownError (the 503 of R7.3). Without WEBHOOK_URLS
 * (`enabled` false) every method resolves at once, having read nothing: a flow that would do more work only for an
 * event (such as naming the sessions it ends) asks `enabled` first.
 */
export interface AccountEvents extends Pick<AccountEventPublisher, 'messages' | 'queued'> {
  /** Whether events are published at all (WEBHOOK_URLS names a URL). */
  readonly enabled: boolean
  /** `user.created`: the account as it was made. */
  created(account: Account): Promise<void>
  /**
   * `user.updated`: the account as it is now, read from the store (its updated_at and avatar included), with the names
   * of what changed, each once, in ACCOUNT_CHANGES's order; none when the account is gone (deleted meanwhile: its
   * `user.deleted` says so) or `changes` is empty.
   */
  updated(userId: string, changes: readonly AccountChange[]): Promise<void>
  /** `user.password_changed`. */
  passwordChanged(userId: string, reason: PasswordChange): Promise<void>
  /** `user.mfa_changed`, with the kinds of the confirmed factors the account has now, read from the store. */
  mfaChanged(userId: string): Promise<void>
  /** One `session.ended` for each of `sessionIds` (none for an empty list), in one transaction. */
  sessionsEnded(userId: string, sessionIds: readonly string[], reason: SessionEndReason): Promise<void>
  // messages() and queued() are the publisher's: for a store write that commits the events in its own transaction
  // (an account's deletion and its `user.deleted`: removeAccount)
}

export interface AccountEventsDeps {
  /** The webhooks' publisher, and whether it publishes at all (WEBHOOK_URLS names a URL). */
  publisher: AccountEventPublisher & { readonly enabled: boolean }
  users: Pick<UserStore, 'findById'>
  factors: Pick<FactorStore, 'list'>
}

/** The events of a service without WEBHOOK_URLS, and of a caller given none (a test, a command without them). */
export const NO_ACCOUNT_EVENTS: AccountEvents = Object.freeze({
  enabled: false,
  created: async () => {},
  updated: async () => {},
  passwordChanged: async () => {},
  mfaChanged: async () => {},
  sessionsEnded: async () => {},
  messages: () => [],
  queued: () => {},
})

/** The kinds of factor, in the order `data.factors` lists them. */
const FACTOR_KINDS: readonly FactorType[] = ['passkey', 'totp']

export function createAccountEvents(deps: AccountEventsDeps): AccountEvents {
  const { publisher, users, factors } = deps
  if (!publisher.enabled) return NO_ACCOUNT_EVENTS
  const publish = (events: readonly AccountEvent[]) => publisher.publish(events)
  return {
    enabled: true,
    messages: (events) => publisher.messages(events),
    queued: (messages) => publisher.queued(messages),
    created: (account) => publish([{ type: 'user.created', user: account }]),
    async updated(userId, changes) {
      if (changes.length === 0) return
      const user = await users.findById(userId)
      if (user === null) return
      // each name once, in the order of ACCOUNT_CHANGES
      const named = ACCOUNT_CHANGES.filter((change) => changes.includes(change))
      await publish([{ type: 'user.updated', user: toAccount(user), changes: named }])
    },
    passwordChanged: (userId, reason) => publish([{ type: 'user.password_changed', userId, reason }]),
    async mfaChanged(userId) {
      const enrolled = new Set((await factors.list(userId)).flatMap((f) => (f.confirmed ? [f.type] : [])))
      await publish([
        { type: 'user.mfa_changed', userId, factors: FACTOR_KINDS.filter((kind) => enrolled.has(kind)) },
      ])
    },
    async sessionsEnded(userId, sessionIds, reason) {
      if (sessionIds.length === 0) return
      await publish(sessionIds.map((sessionId) => ({ type: 'session.ended', userId, sessionId, reason })))
    },
  }
}
