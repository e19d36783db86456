import type { StorageCall } from '../storage-call.js'
import type { LoginAttemptStore } from '../stores.js'
import { createRedisScript, type ScriptCommands } from './redis-script.js'

/**
 * A record is a hash { c: attempts, t: time of the last one }, expiring with it. The scripts check the expiry
 * against the service clock as well as by the TTL (as the session store does), so Redis and the in-process
 * store agree. KEYS[1] the record; ARGV[1] now.
 */
const READ = `
local now = tonumber(ARGV[1])
local fields = redis.call('HMGET', KEYS[1], 'c', 't', 'e')
local count, last, expires = tonumber(fields[1]), tonumber(fields[2]), tonumber(fields[3])
if count == nil or (expires ~= nil and expires <= now) then count = nil end
`

/** ARGV[2..5] the policy: free, base delay, maximum delay, forget after. Returns 0 when taken, else the wait. */
const TAKE = createRedisScript(`${READ}
count = count or 0
last = last or now
local free, base, max, forget = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if count >= free then
  local wait = math.ceil(last + math.min(max, base * 2 ^ (count - free)) - now)
  if wait > 0 then return wait end
end
redis.call('HSET', KEYS[1], 'c', count + 1, 't', now, 'e', now + forget)
redis.call('PEXPIRE', KEYS[1], forget)
return 0
`)

/** Returns the count, or -1 for none. */
const REMEMBERED = createRedisScript(`${READ}
if count == nil then return -1 end
return count
`)

const COUNT = createRedisScript(`${READ}
if count ~= nil then redis.call('HINCRBY', KEYS[1], 'c', 1) end
return 0
`)

const REFUND = createRedisScript(`${READ}
if count ~= nil and count > 0 then redis.call('HINCRBY', KEYS[1], 'c', -1) end
return 0
`)

/** ARGV[2] how long to keep the record. */
const REMEMBER = createRedisScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'c', 0, 't', ARGV[1], 'e', tonumber(ARGV[1]) + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0
`)

/** Login attempts in Redis: one hash per key, `<prefix>login:<key>`, expiring with its record. */
export function createRedisLoginAttemptStore(
  redis: ScriptCommands & { del(key: string): Promise<number> },
  options: { keyPrefix: string; call: StorageCall },
): LoginAttemptStore {
  const { call } = options
  const redisKey = (key: string): [string] => [`${options.keyPrefix}login:${key}`]
  return {
    async take(key, now, policy) {
      const args = [now, policy.free, policy.baseDelayMs, policy.maxDelayMs, policy.forgetAfterMs]
      return Number(await call('loginAttempts.take', () => TAKE.run(redis, redisKey(key), args)))
    },
    async remembered(key, now) {
      const count = Number(
        await call('loginAttempts.remembered', () => REMEMBERED.run(redis, redisKey(key), [now])),
      )
      return count < 0 ? null : count
    },
    async count(key, now) {
      await call('loginAttempts.count', () => COUNT.run(redis, redisKey(key), [now]))
    },
    async refund(key, now) {
      await call('loginAttempts.refund', () => REFUND.run(redis, redisKey(key), [now]))
    },
    async remember(key, now, keepMs) {
      await call('loginAttempts.remember', () => REMEMBER.run(redis, redisKey(key), [now, keepMs]))
    },
    async forget(key) {
      await call('loginAttempts.forget', () => redis.del(...redisKey(key)))
    },
  }
}
