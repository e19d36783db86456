import type { EmailCodeStore, OutboxStore, SessionStore, UserRecord, UserStore } from '../storage/stores.js'
import type { AccountEventPublisher } from './account-events.js'

/** The stores an account's removal empties, and the webhooks its `user.deleted` event goes to. */
export interface AccountRemovalStores {
  users: Pick<UserStore, 'delete'>
  sessions: Pick<SessionStore, 'retire' | 'reinstate'>
  codes: Pick<EmailCodeStore, 'deleteFor'>
  outbox: Pick<OutboxStore, 'deleteFor'>
  /** Absent: no event (a caller without webhooks). */
  webhooks?: Pick<AccountEventPublisher, 'messages' | 'queued'>
}

/**
 * Where a removal stopped: at `retire` nothing changed; at `delete` the account is still there, and its sessions
 * were ended (`reinstated`: it may log in again; otherwise it cannot until the removal is run again).
 */
export interface RemovalFailure {
  stage: 'retire' | 'delete'
  reinstated: boolean
  cause: unknown
}

/**
 * Removes the account (POST /auth/delete, `tessera users delete`: docs/api.md R4.21.1, R6.3.6, R6.4.6), in an order
 * that leaves a usable account whenever a step fails before the account itself is deleted: first no session is left
 * and none can start until `retiredUntil` (even by a login that has already read the account), then its codes and
 * queued mail, then the account. False when there was no such account (deleted meanwhile). A failure goes to `fail`,
 * which throws what its caller answers with; by default the store's own error.
 */
export async function removeAccount(
  stores: AccountRemovalStores,
  user: UserRecord,
  retiredUntil: number,
  fail: (failure: RemovalFailure) => never = ({ cause }) => {
    throw cause
  },
): Promise<boolean> {
  try {
    await stores.sessions.retire(user.id, retiredUntil)
  } catch (cause) {
    return fail({ stage: 'retire', reinstated: false, cause })
  }
  try {
    await stores.codes.deleteFor(user.id, user.email)
    // its mail, never its events (docs/api.md R6.5.3)
    await stores.outbox.deleteFor(user.id, user.email)
    // docs/api.md §6.5: `user.deleted` is queued in the deletion's own transaction, so that neither is without the other
    const events =
      stores.webhooks?.messages([{ type: 'user.deleted', user: { id: user.id, email: user.email } }]) ?? []
    const deleted = await stores.users.delete(user.id, { outbox: events })
    if (deleted) stores.webhooks?.queued(events)
    return deleted
  } catch (cause) {
    const reinstated = await stores.sessions.reinstate(user.id).then(
      () => true,
      () => false,
    )
    return fail({ stage: 'delete', reinstated, cause })
  }
}
