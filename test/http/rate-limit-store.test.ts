import { randomBytes } from 'node:crypto'
import rateLimit from '@fastify/rate-limit'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { StorageError } from '../../src/errors.js'
import { rateLimitStore } from '../../src/http/rate-limit-store.js'
import { createMemoryRateCounterStore } from '../../src/storage/memory/memory-rate-counter-store.js'
import { createRedisRateCounterStore } from '../../src/storage/redis/redis-rate-counter-store.js'
import { createStorageCall } from '../../src/storage/storage-call.js'
import type { RateCounterStore } from '../../src/storage/stores.js'
import { servers } from '../support/backends.js'

const LIMIT = { max: 2, timeWindow: 60_000 }

/** An app limited as Tessera's public auth routes are: per route, per client address, counting in `counters`. */
async function limitedApp(counters: RateCounterStore): Promise<FastifyInstance> {
  const app = Fastify()
  const fallback = createMemoryRateCounterStore(systemClock)
  await app.register(rateLimit, {
    global: false,
    store: rateLimitStore(counters, fallback),
    skipOnError: false,
  })
  app.post('/a', { config: { rateLimit: LIMIT } }, async () => ({ ok: true }))
  app.post('/b', { config: { rateLimit: LIMIT } }, async () => ({ ok: true }))
  app.get('/free', async () => ({ ok: true }))
  await app.ready()
  return app
}

const hit = async (app: FastifyInstance, url: string, remoteAddress = '192.0.2.1') => {
  const reply = await app.inject({ method: url === '/free' ? 'GET' : 'POST', url, remoteAddress })
  return { status: reply.statusCode, remaining: reply.headers['x-ratelimit-remaining'] }
}

describe('rateLimitStore: @fastify/rate-limit counting in a RateCounterStore', () => {
  let apps: FastifyInstance[] = []
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()))
    apps = []
  })
  const open = async (counters: RateCounterStore) => {
    const app = await limitedApp(counters)
    apps.push(app)
    return app
  }

  it('asks for one hit per limited request, on a key of the route and the client address, with its window', async () => {
    const calls: Array<[string, number]> = []
    const app = await open({
      async increment(key, windowMs) {
        calls.push([key, windowMs])
        return { count: 1, resetAfterMs: windowMs }
      },
    })
    expect((await hit(app, '/a')).status).toBe(200)
    expect((await hit(app, '/b', '2001:db8::1')).status).toBe(200)
    expect((await hit(app, '/free')).status).toBe(200)
    expect(calls).toEqual([
      ['POST:/a:192.0.2.1', 60_000],
      ['POST:/b:2001:db8::', 60_000],
    ])
  })

  it('Redis down opens the door: no longer, a failing counter store is replaced by counts in the process', async () => {
    let failing = false
    let hits = 0
    const app = await open({
      async increment(_key, windowMs) {
        if (failing)
          throw new StorageError('rateCounters.increment failed', { cause: new Error('ECONNREFUSED') })
        return { count: ++hits, resetAfterMs: windowMs }
      },
    })
    failing = true
    expect([await hit(app, '/a'), await hit(app, '/a'), await hit(app, '/a')]).toEqual([
      { status: 200, remaining: '1' },
      { status: 200, remaining: '0' },
      { status: 429, remaining: '0' },
    ])
    // another address keeps a budget of its own; the store counts again once it answers
    expect((await hit(app, '/a', '192.0.2.2')).status).toBe(200)
    failing = false
    expect(await hit(app, '/b')).toEqual({ status: 200, remaining: '1' })
  })

  describe.skipIf(servers.redis === undefined)('on Redis', () => {
    let redis: Redis
    let counters: RateCounterStore
    const keyPrefix = `tessera_test_${process.pid}_${randomBytes(4).toString('hex')}:`
    beforeAll(async () => {
      redis = new Redis(servers.redis as string, { lazyConnect: true })
      await redis.connect()
      counters = createRedisRateCounterStore(redis, { keyPrefix, call: createStorageCall(5_000) })
    })
    afterAll(async () => {
      const keys = await redis.keys(`${keyPrefix}*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    })

    it('limits each route per client address: the request past max is a 429', async () => {
      const app = await open(counters)
      expect([await hit(app, '/a'), await hit(app, '/a'), await hit(app, '/a')]).toEqual([
        { status: 200, remaining: '1' },
        { status: 200, remaining: '0' },
        { status: 429, remaining: '0' },
      ])
      // another route, and another address, have budgets of their own
      expect((await hit(app, '/b')).status).toBe(200)
      expect((await hit(app, '/a', '192.0.2.2')).status).toBe(200)
      const ttl = await redis.pttl(`${keyPrefix}rate-limit:POST:/a:192.0.2.1`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(60_000)
    })

    it('two instances on one Redis share their counters', async () => {
      const [first, second] = [await open(counters), await open(counters)]
      const address = '198.51.100.7'
      expect(await hit(first, '/a', address)).toEqual({ status: 200, remaining: '1' })
      expect(await hit(second, '/a', address)).toEqual({ status: 200, remaining: '0' })
      expect((await hit(first, '/a', address)).status).toBe(429)
    })
  })
})

if (servers.redis === undefined)
  console.warn('skipping the Redis rate-limit store tests: TEST_REDIS_URL is not set')
