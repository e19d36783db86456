import { Redis } from 'ioredis'
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
 * The service's own layout (redis/redis-refresh-token-store.ts): `<prefix>refresh:{<user id>}` holding
 * `<digest>:<expiresAt>`, expiring at expiresAt. The copy's tests refresh through the service after a copy into
 * Redis and out of it, so the two cannot drift apart unnoticed.
 */
const keyOf = (prefix: string, userId: string) => `${prefix}refresh:{${userId}}`

/** Connects to the Redis of `url`; `keyPrefix` is REDIS_KEY_PREFIX. */
export async function openRedisTokens(url: string, keyPrefix: string): Promise<RedisTokens> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 10_000, maxRetriesPerRequest: 1 })
  let firstError: unknown
  const remember = (error: unknown) => {
    firstError ??= error
  }
  redis.on('error', remember)
  try {
    await redis.connect()
  } catch (error) {
    redis.disconnect()
    throw firstError ?? error
  }
  const location = new URL(url)
  return {
    async read(userIds, now) {
      if (userIds.length === 0) return []
      const values = await redis.mget(userIds.map((id) => keyOf(keyPrefix, id)))
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
        pipeline.set(keyOf(keyPrefix, row.userId), `${row.digest}:${row.expiresAt}`, 'PXAT', row.expiresAt)
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
      redis.off('error', remember)
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
