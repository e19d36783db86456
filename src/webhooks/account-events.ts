import type { Account } from '../auth/account.js'
import { toAccount } from '../auth/session-starter.js'
import type { FactorStore, FactorType, UserStore } from '../storage/stores.js'
import {
  ACCOUNT_CHANGES,
  type AccountChange,
  type PasswordChange,
  type SessionEndReason,
  type WebhookEvent,
} from './webhook-event.js'
import type { WebhookPublisher } from './webhook-publisher.js'

/**
 * The webhook events of the changes of an account (docs/api.md §6.5, R6.5.9 to R6.5.12), for the flows that make
 * them. Each method queues its events and resolves once they are stored: a flow awaits it after its change and before
 * its answer, and a failure to queue rejects with WriteOutcomeUnknownError (the 503 of R7.3). Without WEBHOOK_URLS
 * (`enabled` false) every method resolves at once, having read nothing: a flow that would do more work only for an
 * event (such as naming the sessions it ends) asks `enabled` first.
 */
export interface AccountEvents extends Pick<WebhookPublisher, 'messages' | 'queued'> {
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
  publisher: Pick<WebhookPublisher, 'enabled' | 'publish' | 'messages' | 'queued'>
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
  const publish = (events: readonly WebhookEvent[]) => publisher.publish(events)
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
