import { Redis } from 'ioredis'
import { connectRedis, refreshTokenKey } from '../redis/redis-client.js'
import type { TokenRow } from './copy-statements.js'

/** Refresh tokens in Redis as the copy reads and writes them, in bulk. */
export interface RedisTokens {
  /** The tokens of `userIds` that expire after `now`, in user id order. */
  read(userIds: readonly string[], now: number): Promise<TokenRow[]>
  /** Stores each token with a TTL ending at its expiry, as the service does. */
  write(rows: readonly TokenRow[]): Promise<void>
  /** Whether any refresh token is stored under the prefix. */
  holdsAny(): Promise<boolean>
  description: string
  close(): Promise<void>
}

/**
 * Connects to the Redis of `url`; `keyPrefix` is REDIS_KEY_PREFIX. Tokens are kept as the service keeps them
 * (redis/redis-refresh-token-store.ts): refreshTokenKey holding `<digest>:<expiresAt>`, expiring at expiresAt.
 */
export async function openRedisTokens(url: string, keyPrefix: string): Promise<RedisTokens> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 10_000, maxRetriesPerRequest: 1 })
  await connectRedis(redis)
  // a failing command rejects on its own; without a listener ioredis would also print every 'error' event
  const ignore = () => {}
  redis.on('error', ignore)
  const location = new URL(url)
  return {
    async read(userIds, now) {
      if (userIds.length === 0) return []
      const values = await redis.mget(userIds.map((id) => refreshTokenKey(keyPrefix, id)))
      const rows: TokenRow[] = []
      userIds.forEach((userId, index) => {
        const value = values[index]
        const separator = value?.lastIndexOf(':') ?? -1
        if (value == null || separator < 0) return
        const expiresAt = Number(value.slice(separator + 1))
        if (expiresAt > now) rows.push({ userId, digest: value.slice(0, separator), expiresAt })
      })
      return rows.sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0))
    },
    async write(rows) {
      if (rows.length === 0) return
      const pipeline = redis.pipeline()
      for (const row of rows) {
        pipeline.set(
          refreshTokenKey(keyPrefix, row.userId),
          `${row.digest}:${row.expiresAt}`,
          'PXAT',
          row.expiresAt,
        )
      }
      const results = (await pipeline.exec()) ?? []
      const failed = results.find(([error]) => error !== null)
      if (failed) throw failed[0]
    },
    async holdsAny() {
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}refresh:*`, 'COUNT', 1000)
        if (keys.length > 0) return true
        cursor = next
      } while (cursor !== '0')
      return false
    },
    description: `redis ${location.host}${location.pathname} (prefix ${keyPrefix})`,
    async close() {
      redis.off('error', ignore)
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
