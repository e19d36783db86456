import type { Clock } from '../../clock.js'
import type { RateCounterStore } from '../stores.js'

/** Counters kept at most; past it the oldest windows go first, so a flood of new keys cannot exhaust memory. */
const MAX_COUNTERS = 100_000

/** Rate counters in fixed windows, in this process only: what a limiter counts with while Redis fails. */
export function createMemoryRateCounterStore(clock: Clock): RateCounterStore {
  const counters = new Map<string, { count: number; endsAt: number }>()
  return {
    async increment(key, windowMs) {
      const now = clock.now()
      const current = counters.get(key)
      if (current !== undefined && current.endsAt > now) {
        current.count++
        return { count: current.count, resetAfterMs: current.endsAt - now }
      }
      counters.delete(key)
      counters.set(key, { count: 1, endsAt: now + windowMs })
      // insertion order: the first key is the window opened longest ago
      if (counters.size > MAX_COUNTERS) counters.delete(counters.keys().next().value as string)
      return { count: 1, resetAfterMs: windowMs }
    },
  }
}
