import type { Redis } from 'ioredis'
import type { StorageCall } from '../storage-call.js'
import type { RefreshTokenStore, StoredRefreshToken } from '../stores.js'
import { createRedisScript } from './redis-script.js'

/**
 * The compare-and-swap of a refresh in one script, which Redis runs atomically: the stored value must still be the
 * current digest and unexpired at `now`. KEYS[1] the user's key; ARGV current digest, now, next digest, next expiry.
 */
const ROTATE = createRedisScript(`
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local separator = string.find(stored, ':', 1, true)
if not separator then return 0 end
if string.sub(stored, 1, separator - 1) ~= ARGV[1] then return 0 end
if tonumber(string.sub(stored, separator + 1)) <= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3] .. ':' .. ARGV[4], 'PXAT', ARGV[4])
return 1
`)

/** The slice of ioredis the store uses. */
type RedisCommands = Pick<Redis, 'set' | 'del' | 'evalsha' | 'eval'>

/**
 * Refresh tokens in Redis: one key per user, `<prefix>refresh:{<user id>}`, holding `<digest>:<expiresAt>` with a
 * TTL ending at the token's expiry. The braces make the user id the hash tag, so a user's keys share one slot and
 * the script runs on Redis Cluster. Expiry is checked against the service clock as well as by the TTL, so the
 * store agrees with the SQL stores to the millisecond.
 */
export function createRedisRefreshTokenStore(
  redis: RedisCommands,
  options: { keyPrefix: string; call: StorageCall },
): RefreshTokenStore {
  const key = (userId: string) => `${options.keyPrefix}refresh:{${userId}}`
  const value = (token: StoredRefreshToken) => `${token.digest}:${token.expiresAt}`
  const { call } = options

  return {
    async put(userId, token) {
      await call('refreshTokens.put', () => redis.set(key(userId), value(token), 'PXAT', token.expiresAt))
    },
    async rotate(userId, currentDigest, next, now) {
      const result = await call('refreshTokens.rotate', () =>
        ROTATE.run(redis, [key(userId)], [currentDigest, now, next.digest, next.expiresAt]),
      )
      return result === 1
    },
    async delete(userId) {
      await call('refreshTokens.delete', () => redis.del(key(userId)))
    },
  }
}
