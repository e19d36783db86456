import type { Clock } from '../clock.js'
import type { MailLog } from './mail-observer.js'

/** How the outbox sender reports a store that fails: once when it starts, then at most once per `everyMs`. */
export interface StoreFailureLog {
  /** A call of `operation` (`outbox.claim`) failed. */
  failed(operation: string, error: unknown): void
  /** A call of `operation` succeeded: its failure, if any, is over. */
  answered(operation: string): void
}

/**
 * While the store fails, the sender meets the failure at every pass (about every second): for each operation, one
 * error line when its failure starts, then one per `everyMs` with the count, and an info line when it answers again.
 * By operation, so that one that keeps failing while another works (a removal, when the claims pass) is not logged
 * anew at every pass.
 */
export function createStoreFailureLog(log: MailLog, clock: Clock, everyMs: number): StoreFailureLog {
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
        { err: error, operation, failures },
        'the outbox store failed: the mail waits in the outbox and is tried again',
      )
      failing.set(operation, { since: known?.since ?? now, loggedAt: now, failures })
    },
    answered(operation) {
      const known = failing.get(operation)
      if (known === undefined) return
      failing.delete(operation)
      log.info({ operation, failedForMs: clock.now() - known.since }, 'the outbox store answers again')
    },
  }
}
