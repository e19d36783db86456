import type { StorageCall } from '../storage-call.js'
import type { RateCounterStore } from '../stores.js'
import { createRedisScript, type ScriptCommands } from './redis-script.js'

/**
 * One hit, atomically: the counter's first hit sets its expiry to the window, so the key disappears (and the count
 * starts again) when the window ends. KEYS[1] the counter; ARGV[1] the window in milliseconds. Returns the count and
 * the milliseconds left in the window.
 */
const INCREMENT = createRedisScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {count, tonumber(ARGV[1])}
end
return {count, redis.call('PTTL', KEYS[1])}
`)

/** Rate counters in Redis: one key per counter, `<prefix>rate-limit:<key>`, expiring with its window. */
export function createRedisRateCounterStore(
  redis: ScriptCommands,
  options: { keyPrefix: string; call: StorageCall },
): RateCounterStore {
  const { call } = options
  return {
    async increment(key, windowMs) {
      const reply = await call('rateCounters.increment', () =>
        INCREMENT.run(redis, [`${options.keyPrefix}rate-limit:${key}`], [windowMs]),
      )
      const [count, resetAfterMs] = reply as [number, number]
      return { count, resetAfterMs }
    },
  }
}
