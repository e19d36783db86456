import { setTimeout as sleep } from 'node:timers/promises'

/** How long a starting instance waits for another one's migrations. */
export const MIGRATION_LOCK_WAIT_MS = 120_000

/**
 * Takes a lock by trying it every 100 ms, so that no single statement waits long enough to hit the statement
 * timeout; fails after MIGRATION_LOCK_WAIT_MS.
 */
export async function acquireLock(tryLock: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS
  while (!(await tryLock())) {
    if (Date.now() > deadline) throw new Error(`migration lock not free after ${MIGRATION_LOCK_WAIT_MS} ms`)
    await sleep(100)
  }
}
