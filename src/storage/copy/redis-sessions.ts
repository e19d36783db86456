import { Redis } from 'ioredis'
import { connectRedis, legacyRefreshTokenKey, sessionsKey } from '../redis/redis-client.js'
import { decodeSessionRecord, encodeSessionRecord, legacySession } from '../redis/session-record.js'
import type { SessionRow } from './copy-statements.js'

/** Sessions in Redis as the copy reads and writes them, in bulk. */
export interface RedisSessions {
  /**
   * The sessions of `userIds` that expire after `now`, a user's legacy key among them as the service reads it
   * (session-record.ts's legacySession, started `now`), in no order.
   */
  read(userIds: readonly string[], now: number): Promise<SessionRow[]>
  /** Stores each session in its user's hash, which then expires with its latest session, as the service does. */
  write(rows: readonly SessionRow[]): Promise<void>
  /** Whether any session, or any refresh token of an earlier version, is stored under the prefix. */
  holdsAny(): Promise<boolean>
  description: string
  close(): Promise<void>
}

/**
 * Connects to the Redis of `url`; `keyPrefix` is REDIS_KEY_PREFIX. Sessions are kept as the service keeps them
 * (redis/redis-session-store.ts): a hash per user under sessionsKey, a field per session holding its record
 * (session-record.ts), expiring at the latest expiry of its sessions.
 */
export async function openRedisSessions(url: string, keyPrefix: string): Promise<RedisSessions> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 10_000, maxRetriesPerRequest: 1 })
  await connectRedis(redis)
  // a failing command rejects on its own; without a listener ioredis would also print every 'error' event
  const ignore = () => {}
  redis.on('error', ignore)
  const location = new URL(url)
  const run = async (pipeline: ReturnType<Redis['pipeline']>) => {
    const results = (await pipeline.exec()) ?? []
    const failed = results.find(([error]) => error !== null)
    if (failed) throw failed[0]
    return results.map(([, value]) => value)
  }
  return {
    async read(userIds, now) {
      if (userIds.length === 0) return []
      // each user's legacy key before its hash: a conversion in between shows the session twice, never not at all
      const pipeline = redis.pipeline()
      for (const userId of userIds) {
        pipeline.get(legacyRefreshTokenKey(keyPrefix, userId))
        pipeline.hgetall(sessionsKey(keyPrefix, userId))
      }
      const values = await run(pipeline)
      return userIds.flatMap((userId, index) => {
        const legacy = values[2 * index] as string | null
        const fields = values[2 * index + 1] as Record<string, string>
        const sessions: SessionRow[] = Object.entries(fields)
          .map(([id, value]) => ({ ...decodeSessionRecord(userId, id, value), slot: null }))
          .filter((session) => session.expiresAt > now)
        const converted = legacy === null ? null : legacySession(userId, legacy, now)
        if (converted !== null && !sessions.some((session) => session.id === converted.id))
          sessions.push({ ...converted, slot: null })
        return sessions
      })
    },
    async write(rows) {
      if (rows.length === 0) return
      const latest = new Map<string, number>()
      const pipeline = redis.pipeline()
      for (const row of rows) {
        pipeline.hset(sessionsKey(keyPrefix, row.userId), row.id, encodeSessionRecord(row))
        latest.set(row.userId, Math.max(latest.get(row.userId) ?? 0, row.expiresAt))
      }
      for (const [userId, expiresAt] of latest) pipeline.pexpireat(sessionsKey(keyPrefix, userId), expiresAt)
      await run(pipeline)
    },
    async holdsAny() {
      for (const kind of ['sessions', 'refresh']) {
        let cursor = '0'
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}${kind}:*`, 'COUNT', 1000)
          if (keys.length > 0) return true
          cursor = next
        } while (cursor !== '0')
      }
      return false
    },
    description: `redis ${location.host}${location.pathname} (prefix ${keyPrefix})`,
    async close() {
      redis.off('error', ignore)
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
