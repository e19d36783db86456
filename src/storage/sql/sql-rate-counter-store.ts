import type { Clock } from '../../clock.js'
import type { StorageCall } from '../storage-call.js'
import type { RateCounterStore } from '../stores.js'
import { MAX_WINDOW_MS, storedCounterKey, toRateCount } from './rate-counter-rows.js'
import type { SqlDatabase } from './sql-database.js'

/** Counters one pruning statement deletes at most: each is a short write, however many windows have ended. */
const PRUNE_BATCH = 1_000

/** RateCounterStore in the SQL database, whose ended windows stay until pruned. */
type SqlRateCounterStore = Required<RateCounterStore>

/**
 * RateCounterStore in the `rate_counters` table of any SQL engine (migration 0005): the shared counters of a store
 * without Redis. One row per key holds the count of its current window and when that window ends, by `clock`; a hit
 * is one upsert (incrementRateCounter). Rows of ended windows stay until `prune` removes them (a later hit restarts
 * them in place).
 */
export function createSqlRateCounterStore(
  database: SqlDatabase,
  call: StorageCall,
  clock: Clock,
): SqlRateCounterStore {
  const { statements } = database
  return {
    async increment(key, windowMs) {
      if (!(Number.isSafeInteger(windowMs) && windowMs >= 1 && windowMs <= MAX_WINDOW_MS))
        throw new RangeError(`a window of ${windowMs} ms is not a whole number from 1 to ${MAX_WINDOW_MS}`)
      const now = clock.now()
      const { sql, parameters } = statements.incrementRateCounter(storedCounterKey(key), windowMs, now)
      const result = await call('sharedCounters.increment', (attempt) =>
        database.write(sql, parameters, attempt),
      )
      return toRateCount(result, now, windowMs)
    },
    async prune(now) {
      let deleted = 0
      for (;;) {
        const { sql, parameters } = statements.pruneRateCounters(now, PRUNE_BATCH)
        const { changes } = await call('sharedCounters.prune', (attempt) =>
          database.write(sql, parameters, attempt),
        )
        deleted += changes
        if (changes < PRUNE_BATCH) return deleted
      }
    },
  }
}
