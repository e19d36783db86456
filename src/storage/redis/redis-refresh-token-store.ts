import type { Redis } from 'ioredis'
import type { StorageAttempt, StorageCall } from '../storage-call.js'
import type { RefreshTokenStore, StoredRefreshToken } from '../stores.js'
import { redisClockOffset } from './redis-client.js'
import { createRedisScript, type RedisScript } from './redis-script.js'

/**
 * docs/api.md R7.2: every write script first reads Redis's own clock and does nothing (returns -1) past the deadline
 * it is given, the moment the service stops waiting for it. A command sent to a Redis that stops answering
 * (paused, overloaded) runs when it resumes; without the deadline it would take effect then, long after the client
 * was told it failed.
 */
const PAST_DEADLINE = `
local clock = redis.call('TIME')
local deadline = tonumber(ARGV[#ARGV])
if deadline > 0 and tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) > deadline then return -1 end
`

/**
 * The compare-and-swap of a refresh in one script, which Redis runs atomically: the stored value must still be the
 * current digest and unexpired at `now`. KEYS[1] the user's key; ARGV current digest, now, next digest, next expiry,
 * deadline.
 */
const ROTATE = createRedisScript(`${PAST_DEADLINE}
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local separator = string.find(stored, ':', 1, true)
if not separator then return 0 end
if string.sub(stored, 1, separator - 1) ~= ARGV[1] then return 0 end
if tonumber(string.sub(stored, separator + 1)) <= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3] .. ':' .. ARGV[4], 'PXAT', ARGV[4])
return 1
`)

/** Stores a token. KEYS[1] the user's key; ARGV the value, its expiry, deadline. */
const PUT = createRedisScript(`${PAST_DEADLINE}
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
`)

/** Deletes the token. KEYS[1] the user's key; ARGV deadline. */
const DELETE = createRedisScript(`${PAST_DEADLINE}
redis.call('DEL', KEYS[1])
return 1
`)

/** The slice of ioredis the store uses. */
type RedisCommands = Pick<Redis, 'status' | 'evalsha' | 'eval'>

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

  /**
   * Runs a write script with the deadline of `attempt` on Redis's clock. Nothing is sent to a client that is not
   * connected (ioredis would refuse it at once): that failure is a plain one, the write did not happen.
   */
  const write = async (
    script: RedisScript,
    userId: string,
    args: readonly (string | number)[],
    attempt: StorageAttempt,
  ): Promise<number> => {
    if (redis.status !== 'ready') throw new Error(`redis is not connected (${redis.status})`)
    const deadline = Number.isFinite(attempt.deadline)
      ? Math.floor(attempt.deadline + redisClockOffset(redis))
      : 0
    if (!attempt.commit()) throw attempt.signal.reason
    const result = await script.run(redis, [key(userId)], [...args, deadline])
    if (result === -1) throw new Error('refused by Redis: past its deadline')
    return result as number
  }

  return {
    async put(userId, token) {
      await call('refreshTokens.put', (attempt) =>
        write(PUT, userId, [value(token), token.expiresAt], attempt),
      )
    },
    async rotate(userId, currentDigest, next, now) {
      const result = await call('refreshTokens.rotate', (attempt) =>
        write(ROTATE, userId, [currentDigest, now, next.digest, next.expiresAt], attempt),
      )
      return result === 1
    },
    async delete(userId) {
      await call('refreshTokens.delete', (attempt) => write(DELETE, userId, [], attempt))
    },
  }
}
