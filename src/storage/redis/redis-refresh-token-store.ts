import type { Redis } from 'ioredis'
import { wallClockNow } from '../../time.js'
import type { StorageAttempt, StorageCall } from '../storage-call.js'
import type { RefreshTokenStore, StoredRefreshToken } from '../stores.js'
import { refreshTokenKey } from './redis-client.js'
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

/**
 * Stores a token, unless the user is retired (the account is being or has been deleted): then 0. KEYS[1] the user's
 * key, KEYS[2] the user's retired mark; ARGV the value, its expiry, deadline.
 */
const PUT = createRedisScript(`${PAST_DEADLINE}
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
`)

/**
 * Deletes the token and marks the user retired until ARGV[1]. KEYS[1] the user's key, KEYS[2] the mark; ARGV until,
 * deadline.
 */
const RETIRE = createRedisScript(`${PAST_DEADLINE}
redis.call('SET', KEYS[2], '1', 'PXAT', ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`)

/** Removes the retired mark. KEYS[1] the mark; ARGV deadline. */
const REINSTATE = createRedisScript(`${PAST_DEADLINE}
redis.call('DEL', KEYS[1])
return 1
`)

/** Deletes the token. KEYS[1] the user's key; ARGV deadline. */
const DELETE = createRedisScript(`${PAST_DEADLINE}
redis.call('DEL', KEYS[1])
return 1
`)

/** The slice of ioredis the store uses. */
type RedisCommands = Pick<Redis, 'status' | 'evalsha' | 'eval' | 'get' | 'time' | 'on'>

/** A measurement of Redis's clock slower than this says little about the offset, and is dropped. */
const MAX_MEASURING_ROUND_TRIP_MS = 50

/**
 * Refresh tokens in Redis: one key per user, `<prefix>refresh:{<user id>}`, holding `<digest>:<expiresAt>` with a
 * TTL ending at the token's expiry, and for a deleted account `<prefix>retired:{<user id>}` (RefreshTokenStore.retire).
 * The braces make the user id the hash tag, so a user's keys share one slot and the scripts run on Redis Cluster. Expiry is checked against the service clock as well as by the TTL, so the
 * store agrees with the SQL stores to the millisecond.
 */
export function createRedisRefreshTokenStore(
  redis: RedisCommands,
  options: { keyPrefix: string; call: StorageCall },
): RefreshTokenStore {
  const key = (userId: string) => refreshTokenKey(options.keyPrefix, userId)
  const retiredKey = (userId: string) => `${options.keyPrefix}retired:{${userId}}`
  const value = (token: StoredRefreshToken) => `${token.digest}:${token.expiresAt}`
  const { call } = options

  /**
   * Redis's clock minus this process's wall clock, in milliseconds: what turns a call's deadline (wall-clock time,
   * src/time.ts) into one on Redis's clock, which the scripts compare with TIME. Measured now and at each
   * reconnection (another server behind the same address may keep other time), to within half a round trip; 0
   * until the first measurement.
   */
  let clockOffsetMs = 0
  const measureClockOffset = () => {
    const sent = wallClockNow()
    redis.time().then(
      ([seconds, microseconds]) => {
        const received = wallClockNow()
        if (received - sent > MAX_MEASURING_ROUND_TRIP_MS) return
        const redisNow = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000)
        clockOffsetMs = redisNow - (sent + received) / 2
      },
      () => {},
    )
  }
  redis.on('ready', measureClockOffset)
  if (redis.status === 'ready') measureClockOffset()

  /**
   * Runs a write script with the deadline of `attempt` on Redis's clock. Nothing is sent to a client that is not
   * connected (ioredis would refuse it at once): that failure is a plain one, the write did not happen.
   */
  const write = async (
    script: RedisScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    attempt: StorageAttempt,
  ): Promise<number> => {
    if (redis.status !== 'ready') throw new Error(`redis is not connected (${redis.status})`)
    const deadline = Number.isFinite(attempt.deadline) ? Math.floor(attempt.deadline + clockOffsetMs) : 0
    if (!attempt.commit()) throw attempt.signal.reason
    const result = await script.run(redis, keys, [...args, deadline])
    if (result === -1) throw new Error('refused by Redis: past its deadline')
    return result as number
  }

  return {
    async put(userId, token) {
      const result = await call('refreshTokens.put', (attempt) =>
        write(PUT, [key(userId), retiredKey(userId)], [value(token), token.expiresAt], attempt),
      )
      return result === 1
    },
    async rotate(userId, currentDigest, next, now) {
      const result = await call('refreshTokens.rotate', (attempt) =>
        write(ROTATE, [key(userId)], [currentDigest, now, next.digest, next.expiresAt], attempt),
      )
      return result === 1
    },
    async delete(userId) {
      await call('refreshTokens.delete', (attempt) => write(DELETE, [key(userId)], [], attempt))
    },
    async currentExpiry(userId, now) {
      const stored = await call('refreshTokens.currentExpiry', () => redis.get(key(userId)))
      const expiresAt = stored === null ? Number.NaN : Number(stored.slice(stored.indexOf(':') + 1))
      return expiresAt > now ? expiresAt : null
    },
    async retire(userId, until) {
      await call('refreshTokens.retire', (attempt) =>
        write(RETIRE, [key(userId), retiredKey(userId)], [until], attempt),
      )
    },
    async reinstate(userId) {
      await call('refreshTokens.reinstate', (attempt) => write(REINSTATE, [retiredKey(userId)], [], attempt))
    },
  }
}
