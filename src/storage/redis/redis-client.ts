import { Redis } from 'ioredis'

export interface RedisClientOptions {
  /** Bound on connecting and on each command. */
  timeoutMs: number
  log: {
    warn(fields: Record<string, unknown>, message: string): void
    info(fields: Record<string, unknown>, message: string): void
  }
}

/**
 * Connects a client made with `lazyConnect`. On failure it disconnects the client and rejects with the first error
 * the client reported (say, ECONNREFUSED with the address), which tells more than ioredis's own rejection.
 */
export async function connectRedis(client: Redis): Promise<void> {
  let firstError: unknown
  const remember = (error: unknown) => {
    firstError ??= error
  }
  client.on('error', remember)
  try {
    await client.connect()
  } catch (error) {
    client.disconnect()
    throw firstError ?? error
  } finally {
    client.off('error', remember)
  }
}

/**
 * The key of a user's sessions: `<prefix>sessions:{<user id>}`, a hash (redis-session-store.ts). The braces make the
 * user id the hash tag, which keeps a user's keys in one Redis Cluster slot, so one script can touch them all.
 */
export const sessionsKey = (keyPrefix: string, userId: string): string => `${keyPrefix}sessions:{${userId}}`

/**
 * The key of a user's one refresh token before sessions: `<prefix>refresh:{<user id>}`, holding
 * `<digest>:<expiresAt>`. A deployment that ran an earlier version still has such keys; the store and the copy read
 * each as a session (session-record.ts).
 */
export const legacyRefreshTokenKey = (keyPrefix: string, userId: string): string =>
  `${keyPrefix}refresh:{${userId}}`

/**
 * An ioredis client that fails fast instead of queueing while the server is away (so a request answers 500 within
 * the timeout rather than hanging), and reconnects in the background until the server is back. An outage is logged
 * once when it starts and once when it ends, not at every reconnect attempt.
 */
export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const client = new Redis(url, {
    connectTimeout: options.timeoutMs,
    commandTimeout: options.timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    lazyConnect: true,
    // the commands of one turn of the event loop (the rotations of the refreshes that arrived together) go out in
    // one write and come back in one read, on both sides of the connection
    enableAutoPipelining: true,
  })
  // a failure before the first connection is the caller's to report (see openStores), not an outage
  let connected = false
  let down = false
  const lost = (fields: Record<string, unknown>) => {
    if (!connected || down) return
    down = true
    options.log.warn(fields, 'redis connection lost; reconnecting')
  }
  // a server that fails gives 'error'; one that shuts down cleanly only closes, and ioredis then reconnects
  client.on('error', (error: Error) => lost({ err: error }))
  client.on('reconnecting', () => lost({}))
  client.on('ready', () => {
    connected = true
    if (!down) return
    down = false
    options.log.info({}, 'redis connection restored')
  })
  return client
}
