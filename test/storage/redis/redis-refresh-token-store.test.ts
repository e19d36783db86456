import { describe, expect, it } from 'vitest'
import { createRedisRefreshTokenStore } from '../../../src/storage/redis/redis-refresh-token-store.js'
import { createStorageCall } from '../../../src/storage/storage-call.js'

const HOUR = 3_600_000
const TIMEOUT_MS = 1_000

/** A Redis whose TIME is `offsetMs` from this process's clock; it records the arguments of each script it runs. */
function fakeRedis(offsetMs: number, status = 'ready') {
  const listeners = new Map<string, () => void>()
  const scripts: Array<Array<string | number>> = []
  const redis = {
    status,
    offsetMs,
    async time(): Promise<[string, string]> {
      const at = Date.now() + redis.offsetMs
      return [String(Math.floor(at / 1000)), String((at % 1000) * 1000)]
    },
    on(event: string, listener: () => void) {
      listeners.set(event, listener)
      return redis
    },
    async evalsha(_sha: string, _keys: number, ...rest: Array<string | number>) {
      scripts.push(rest)
      return 1
    },
    eval: async () => 1,
    get: async () => null,
  }
  const store = createRedisRefreshTokenStore(
    redis as unknown as Parameters<typeof createRedisRefreshTokenStore>[0],
    { keyPrefix: 'test:', call: createStorageCall(TIMEOUT_MS) },
  )
  return {
    redis,
    store,
    /** Another connection: ioredis's 'ready'. */
    reconnect() {
      redis.status = 'ready'
      listeners.get('ready')?.()
    },
    /** The deadline the last script was given: its last argument. */
    lastDeadline: () => Number(scripts.at(-1)?.at(-1)),
  }
}

/** Lets the TIME measurement answer. */
const measured = () => new Promise((resolve) => setImmediate(resolve))

/** The deadline of a write made now, on a clock `offsetMs` from this process's, give or take a few ms. */
async function expectDeadlineOn(offsetMs: number, write: () => Promise<unknown>, lastDeadline: () => number) {
  const before = Date.now()
  await write()
  const after = Date.now()
  expect(lastDeadline()).toBeGreaterThanOrEqual(before + offsetMs + TIMEOUT_MS - 5)
  expect(lastDeadline()).toBeLessThanOrEqual(after + offsetMs + TIMEOUT_MS + 5)
}

describe('the Redis refresh-token store: write deadlines on Redis’s clock (docs/api.md R7.2)', () => {
  it('each store measures its own client’s clock offset, and measures it again at each reconnection', async () => {
    const ahead = fakeRedis(HOUR)
    const behind = fakeRedis(-HOUR)
    await measured()
    await expectDeadlineOn(HOUR, () => ahead.store.delete('1234567890'), ahead.lastDeadline)
    await expectDeadlineOn(-HOUR, () => behind.store.delete('1234567890'), behind.lastDeadline)

    // the client reconnects to a server that keeps other time
    ahead.redis.offsetMs = 2 * HOUR
    ahead.reconnect()
    await measured()
    await expectDeadlineOn(2 * HOUR, () => ahead.store.delete('1234567890'), ahead.lastDeadline)
    await expectDeadlineOn(-HOUR, () => behind.store.delete('1234567890'), behind.lastDeadline)
  })

  it('a client not connected yet is measured once it is', async () => {
    const later = fakeRedis(HOUR, 'connecting')
    await measured()
    later.reconnect()
    await measured()
    await expectDeadlineOn(HOUR, () => later.store.delete('1234567890'), later.lastDeadline)
  })
})
