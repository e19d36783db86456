import type { EmailCodeStore, OutboxStore, SessionStore, UserRecord, UserStore } from '../storage/stores.js'

/** The stores an account's removal empties. */
export interface AccountRemovalStores {
  users: Pick<UserStore, 'delete'>
  sessions: Pick<SessionStore, 'retire' | 'reinstate'>
  codes: Pick<EmailCodeStore, 'deleteFor'>
  outbox: Pick<OutboxStore, 'deleteFor'>
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
    await stores.outbox.deleteFor(user.id, user.email)
    return await stores.users.delete(user.id)
  } catch (cause) {
    const reinstated = await stores.sessions.reinstate(user.id).then(
      () => true,
      () => false,
    )
    return fail({ stage: 'delete', reinstated, cause })
  }
}
