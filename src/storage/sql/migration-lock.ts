import { setTimeout as sleep } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Tables } from './tables.js'

/** How long a starting instance waits for another one's migrations. */
export const MIGRATION_LOCK_WAIT_MS = 120_000

/** A server-side named lock held by one session: PostgreSQL's advisory locks, MySQL's GET_LOCK. */
export interface SessionLock {
  /** Takes the lock without waiting; true when it was free. */
  tryLock(connection: Kysely<Tables>): Promise<boolean>
  unlock(connection: Kysely<Tables>): Promise<unknown>
}

/**
 * Runs `fn` on one connection while holding a session lock. The lock is tried every 100 ms rather than waited for
 * in one statement, which the statement timeout would cut short; after MIGRATION_LOCK_WAIT_MS by `clock` it gives
 * up.
 */
export function withSessionLock<T>(
  db: Kysely<Tables>,
  lock: SessionLock,
  fn: (connection: Kysely<Tables>) => Promise<T>,
  clock: Clock,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    const deadline = clock.now() + MIGRATION_LOCK_WAIT_MS
    while (!(await lock.tryLock(connection))) {
      if (clock.now() > deadline)
        throw new Error(`migration lock not free after ${MIGRATION_LOCK_WAIT_MS} ms`)
      await sleep(100)
    }
    try {
      return await fn(connection)
    } finally {
      await lock.unlock(connection)
    }
  })
}
