import type { OutboxMessage, OutboxStore } from '../storage/stores.js'
import type { DeliveryLog } from './delivery-log.js'
import type { StoreFailureLog } from './store-failure-log.js'

/** How a lane's delivery settles the messages it dealt with, whatever the store does meanwhile. */
export interface QueueSettlements {
  /** Removes the message (delivered, skipped, given up), or keeps the removal for later when the store fails. */
  remove(id: string, claimant: string): Promise<void>
  /** Makes the message due again at `nextAttemptAt` (an attempt failed), or keeps that for later. */
  failed(id: string, claimant: string, nextAttemptAt: number): Promise<void>
  /** Gives back claimed messages not tried; their leases end their claims should the store fail. */
  release(messages: readonly OutboxMessage[], claimant: string): Promise<void>
  /** Makes the store calls that failed before (a removal after a delivery, above all). */
  settleLeftovers(): Promise<void>
}

export interface QueueSettlementsDeps {
  outbox: Pick<OutboxStore, 'remove' | 'failed' | 'release'>
  storeFailures: StoreFailureLog
  log: DeliveryLog
  /** How the lane's warn line names one of its messages (`a mail`, `an event`), and what tells a duplicate apart. */
  noun: string
  duplicateId: string
}

/** A store call still to be made for a message already dealt with (the store failed when it was first made). */
type Settlement =
  | { kind: 'remove'; id: string; claimant: string }
  | { kind: 'failed'; id: string; claimant: string; nextAttemptAt: number }

/** Settlements kept while the store fails; beyond them, their messages are left to their leases. */
const MAX_SETTLEMENTS = 1_000

/**
 * The settlements of one lane's sender. A delivered message must not be delivered again because the store failed at
 * its removal: such a call is kept and made again at the sender's next pass (settleLeftovers), up to a bound beyond
 * which the oldest are left to their leases (and then delivered once more, with the same id). A removal that finds
 * the message no longer held (its lease ran out and another process took it, or it was removed) is a warn line: it
 * may be delivered again, with the same id.
 */
export function createQueueSettlements(deps: QueueSettlementsDeps): QueueSettlements {
  const { outbox, storeFailures, log } = deps
  let settlements: Settlement[] = []

  /** The store call of a settlement; false when the claim had run out (a removal only). */
  const apply = async (settlement: Settlement): Promise<boolean> => {
    if (settlement.kind === 'remove') return outbox.remove(settlement.id, settlement.claimant)
    await outbox.failed(settlement.id, settlement.claimant, settlement.nextAttemptAt)
    return true
  }

  /** Makes a settlement now; keeps it for a later pass when the store fails. */
  const settle = async (settlement: Settlement): Promise<void> => {
    try {
      const held = await apply(settlement)
      storeFailures.answered(`outbox.${settlement.kind}`)
      if (!held) {
        log.warn(
          { outboxId: settlement.id },
          `${deps.noun} was dealt with after its claim had ended (the lease ran out, or the message was deleted): another process may send it again, with the same ${deps.duplicateId}`,
        )
      }
    } catch (error) {
      storeFailures.failed(`outbox.${settlement.kind}`, error)
      settlements.push(settlement)
      if (settlements.length > MAX_SETTLEMENTS) settlements = settlements.slice(-MAX_SETTLEMENTS)
    }
  }

  return {
    remove: (id, claimant) => settle({ kind: 'remove', id, claimant }),
    failed: (id, claimant, nextAttemptAt) => settle({ kind: 'failed', id, claimant, nextAttemptAt }),
    async release(messages, claimant) {
      if (messages.length === 0) return
      try {
        await outbox.release(
          messages.map((message) => message.id),
          claimant,
        )
      } catch (error) {
        // their lease ends their claim: they are claimed again then
        storeFailures.failed('outbox.release', error)
      }
    },
    async settleLeftovers() {
      const waiting = settlements
      settlements = []
      for (const settlement of waiting) await settle(settlement)
    },
  }
}
