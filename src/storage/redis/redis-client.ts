import { Redis } from 'ioredis'

export interface RedisClientOptions {
  /** Bound on connecting and on each command. */
  timeoutMs: number
  log: {
    warn(fields: Record<string, unknown>, message: string): void
    info(fields: Record<string, unknown>, message: string): void
  }
}

/** Redis's clock minus this process's, in milliseconds, per client, as measured when it last connected. */
const clockOffsets = new WeakMap<object, number>()

/**
 * What to add to this process's clock to read Redis's (for a deadline a script checks against Redis's TIME): as
 * measured by createRedisClient at each connection, to within half a round trip; 0 for a client it did not create
 * or before the first measurement.
 */
export function redisClockOffset(client: object): number {
  return clockOffsets.get(client) ?? 0
}

/** A measurement slower than this says little about the offset, and is dropped. */
const MAX_MEASURING_ROUND_TRIP_MS = 50

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

/** The key of a user's refresh token: `<prefix>refresh:{<user id>}` (the braces keep a user's keys in one slot). */
export const refreshTokenKey = (keyPrefix: string, userId: string): string =>
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
    const sent = Date.now()
    client.time().then(
      ([seconds, microseconds]) => {
        const received = Date.now()
        if (received - sent > MAX_MEASURING_ROUND_TRIP_MS) return
        const redisNow = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000)
        clockOffsets.set(client, redisNow - (sent + received) / 2)
      },
      () => {},
    )
    connected = true
    if (!down) return
    down = false
    options.log.info({}, 'redis connection restored')
  })
  return client
}
