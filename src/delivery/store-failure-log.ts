import type { Clock } from '../clock.js'
import type { DeliveryLog } from './delivery-log.js'

/** How a sender of the outbox reports a store that fails: once when it starts, then at most once per `everyMs`. */
export interface StoreFailureLog {
  /** A call of `operation` (`outbox.claim`) failed. */
  failed(operation: string, error: unknown): void
  /** A call of `operation` succeeded: its failure, if any, is over. */
  answered(operation: string): void
}

/**
 * While the store fails, a sender meets the failure at every pass (about every second): for each operation, one
 * error line when its failure starts, then one per `everyMs` with the count, and an info line when it answers again.
 * By operation, so that one that keeps failing while another works (a removal, when the claims pass) is not logged
 * anew at every pass. `lane` names the sender's lane in each line.
 */
export function createStoreFailureLog(
  log: DeliveryLog,
  clock: Clock,
  everyMs: number,
  lane: string,
): StoreFailureLog {
  const failing = new Map<string, { since: number; loggedAt: number; failures: number }>()
  return {
    failed(operation, error) {
      const now = clock.now()
      const known = failing.get(operation)
      const failures = (known?.failures ?? 0) + 1
      if (known !== undefined && now - known.loggedAt < everyMs) {
        known.failures = failures
        return
      }
      log.error(
        { err: error, operation, lane, failures },
        `the outbox store failed: what waits in its ${lane} lane stays there and is tried again`,
      )
      failing.set(operation, { since: known?.since ?? now, loggedAt: now, failures })
    },
    answered(operation) {
      const known = failing.get(operation)
      if (known === undefined) return
      failing.delete(operation)
      log.info({ operation, lane, failedForMs: clock.now() - known.since }, 'the outbox store answers again')
    },
  }
}
