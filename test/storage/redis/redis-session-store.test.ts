import { createHash, randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisSessionStore } from '../../../src/storage/redis/redis-session-store.js'
import { createStorageCall } from '../../../src/storage/storage-call.js'
import type { SessionStore, StoredSession } from '../../../src/storage/stores.js'
import { servers } from '../../support/backends.js'

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
  }
  const store = createRedisSessionStore(redis as unknown as Parameters<typeof createRedisSessionStore>[0], {
    keyPrefix: 'test:',
    call: createStorageCall(TIMEOUT_MS),
  })
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

describe('the Redis session store: write deadlines on Redis’s clock (docs/api.md R7.2)', () => {
  it('each store measures its own client’s clock offset, and measures it again at each reconnection', async () => {
    const ahead = fakeRedis(HOUR)
    const behind = fakeRedis(-HOUR)
    await measured()
    await expectDeadlineOn(HOUR, () => ahead.store.endAll('1234567890', Date.now()), ahead.lastDeadline)
    await expectDeadlineOn(-HOUR, () => behind.store.endAll('1234567890', Date.now()), behind.lastDeadline)

    // the client reconnects to a server that keeps other time
    ahead.redis.offsetMs = 2 * HOUR
    ahead.reconnect()
    await measured()
    await expectDeadlineOn(2 * HOUR, () => ahead.store.endAll('1234567890', Date.now()), ahead.lastDeadline)
    await expectDeadlineOn(-HOUR, () => behind.store.endAll('1234567890', Date.now()), behind.lastDeadline)
  })

  it('a client not connected yet is measured once it is', async () => {
    const later = fakeRedis(HOUR, 'connecting')
    await measured()
    later.reconnect()
    await measured()
    await expectDeadlineOn(HOUR, () => later.store.reinstate('1234567890'), later.lastDeadline)
  })
})

/**
 * A deployment that ran a version before sessions keeps one key per user, `<prefix>refresh:{<id>}` holding
 * `<digest>:<expiresAt>` and expiring with it. The store reads each as a session of its own, and every script that
 * touches the user's sessions converts it into one first.
 */
describe.skipIf(servers.redis === undefined)(
  'the Redis session store and the keys of an earlier version',
  () => {
    const prefix = `tessera_test_${process.pid}_${randomBytes(4).toString('hex')}:`
    let redis: Redis
    let store: SessionStore
    beforeAll(async () => {
      redis = new Redis(servers.redis as string, { lazyConnect: true })
      await redis.connect()
      store = createRedisSessionStore(redis, { keyPrefix: prefix, call: createStorageCall(5_000) })
    })
    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
      redis.disconnect()
    })

    let users = 0
    const newUserId = () => String(1_000_000_000 + process.pid * 100 + users++)
    const digest = (n: number) => n.toString(16).padStart(64, '0')
    /** The id the legacy token digest(n) gets as a session: its SHA-1's first 32 digits (session-record.ts). */
    const legacyId = (n: number) => createHash('sha1').update(digest(n)).digest('hex').slice(0, 32)
    /** Stores digest(n) as an earlier version did: its value and its expiry as the key's. */
    const storeLegacy = async (userId: string, n: number, expiresAt: number) => {
      await redis.set(`${prefix}refresh:{${userId}}`, `${digest(n)}:${expiresAt}`, 'PXAT', expiresAt)
    }
    const legacyKey = (userId: string) => `${prefix}refresh:{${userId}}`
    const hashKey = (userId: string) => `${prefix}sessions:{${userId}}`
    const next = (n: number, expiresAt = Date.now() + 2 * HOUR) => ({
      digest: digest(n),
      expiresAt,
      clientAddress: '192.0.2.0/24',
      lifetimeMs: null,
    })
    const session = (userId: string, n: number): StoredSession => {
      const now = Date.now()
      return {
        id: randomBytes(16).toString('hex'),
        userId,
        digest: digest(n),
        expiresAt: now + HOUR,
        createdAt: now,
        lastUsedAt: now,
        device: 'curl',
        clientAddress: null,
        previousDigest: null,
        rotatedAt: null,
        secondFactor: false,
      }
    }

    it('a stored token reads as a session of its own, and refreshes exactly once, in the hash thereafter', async () => {
      const userId = newUserId()
      const expiresAt = Date.now() + HOUR
      await storeLegacy(userId, 1, expiresAt)
      const now = Date.now()
      const asSession = {
        id: legacyId(1),
        userId,
        digest: digest(1),
        expiresAt,
        createdAt: now,
        lastUsedAt: now,
        device: '',
        clientAddress: null,
        previousDigest: null,
        rotatedAt: null,
        secondFactor: false,
      }
      expect(await store.list(userId, now)).toEqual([asSession])
      expect(await store.find(userId, { digest: digest(1) }, now)).toEqual(asSession)
      // reading converts nothing
      expect(await redis.exists(legacyKey(userId))).toBe(1)

      const successor = next(2)
      expect(await store.rotate(userId, digest(1), successor, now)).toBe(true)
      expect(await store.rotate(userId, digest(1), next(3), now)).toBe(false)
      expect(await redis.exists(legacyKey(userId))).toBe(0)
      expect(await store.list(userId, now)).toEqual([
        {
          ...asSession,
          digest: successor.digest,
          expiresAt: successor.expiresAt,
          clientAddress: successor.clientAddress,
          previousDigest: digest(1),
          rotatedAt: now,
        },
      ])
      // the hash expires with its session's token
      expect(await redis.pexpiretime(hashKey(userId))).toBe(successor.expiresAt)
    })

    it('a script that converts a stored token and changes nothing else leaves the hash expiring with it', async () => {
      const userId = newUserId()
      const expiresAt = Date.now() + HOUR
      await storeLegacy(userId, 1, expiresAt)
      expect(await store.rotate(userId, digest(2), next(3), Date.now())).toBe(false)
      expect(await store.end(userId, randomBytes(16).toString('hex'), Date.now())).toBe(false)
      expect(await redis.exists(legacyKey(userId))).toBe(0)
      expect(await redis.hkeys(hashKey(userId))).toEqual([legacyId(1)])
      expect(await redis.pexpiretime(hashKey(userId))).toBe(expiresAt)
    })

    it('of 50 concurrent rotations of a stored token exactly one succeeds', async () => {
      const userId = newUserId()
      await storeLegacy(userId, 1, Date.now() + HOUR)
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.rotate(userId, digest(1), next(100 + i), Date.now())),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await store.list(userId, Date.now())).toHaveLength(1)
    })

    it('a stored token is gone from its expiry on, to the millisecond of the caller’s time', async () => {
      const userId = newUserId()
      const expiresAt = Date.now() + HOUR
      await storeLegacy(userId, 1, expiresAt)
      expect(await store.list(userId, expiresAt)).toEqual([])
      expect(await store.rotate(userId, digest(1), next(2), expiresAt)).toBe(false)
      // converted, and still there for a caller whose clock is a millisecond behind (as in SQL)
      expect(await redis.exists(legacyKey(userId))).toBe(0)
      expect(await store.rotate(userId, digest(1), next(2), expiresAt - 1)).toBe(true)
    })

    it('a start with single replaces a stored token; one with a limit counts it as a session', async () => {
      const single = newUserId()
      await storeLegacy(single, 1, Date.now() + HOUR)
      const replacing = session(single, 2)
      expect(await store.start(replacing, 'single', Date.now())).toBe(true)
      expect(await store.list(single, Date.now())).toEqual([replacing])
      expect(await store.rotate(single, digest(1), next(3), Date.now())).toBe(false)

      const perDevice = newUserId()
      await storeLegacy(perDevice, 1, Date.now() + HOUR)
      const beside = session(perDevice, 2)
      expect(await store.start(beside, 10, Date.now())).toBe(true)
      expect((await store.list(perDevice, Date.now())).map((s) => s.id).sort()).toEqual(
        [legacyId(1), beside.id].sort(),
      )
      // a limit of 1: the stored token's session, the least recently used, is ended
      const only = { ...session(perDevice, 3), lastUsedAt: Date.now() + 1_000 }
      expect(await store.start(only, 1, Date.now())).toBe(true)
      expect(await store.list(perDevice, Date.now())).toEqual([only])
    })

    it('end, endAll, endAllReturningIds and retire reach a stored token by the id it reads as', async () => {
      const ended = newUserId()
      await storeLegacy(ended, 1, Date.now() + HOUR)
      expect(await store.end(ended, legacyId(1), Date.now())).toBe(true)
      expect(await store.end(ended, legacyId(1), Date.now())).toBe(false)
      expect(await store.rotate(ended, digest(1), next(2), Date.now())).toBe(false)

      const all = newUserId()
      await storeLegacy(all, 1, Date.now() + HOUR)
      expect(await store.endAll(all, Date.now())).toBe(1)
      expect(await store.list(all, Date.now())).toEqual([])

      const named = newUserId()
      await storeLegacy(named, 1, Date.now() + HOUR)
      expect(await store.endAllReturningIds(named, Date.now())).toEqual([legacyId(1)])
      expect(await store.list(named, Date.now())).toEqual([])

      const retired = newUserId()
      await storeLegacy(retired, 1, Date.now() + HOUR)
      await store.retire(retired, Date.now() + HOUR)
      expect(await redis.exists(legacyKey(retired), hashKey(retired))).toBe(0)
      expect(await store.start(session(retired, 2), 'single', Date.now())).toBe(false)
    })

    it('a start deletes the expired sessions; the hash expires at the latest expiry of the others', async () => {
      const userId = newUserId()
      const now = Date.now()
      const short = { ...session(userId, 1), expiresAt: now + 60_000 }
      const long = { ...session(userId, 2), expiresAt: now + 2 * HOUR }
      await store.start(short, 10, now)
      await store.start(long, 10, now)
      expect(await redis.pexpiretime(hashKey(userId))).toBe(long.expiresAt)
      await store.end(userId, long.id, now)
      expect(await redis.pexpiretime(hashKey(userId))).toBe(short.expiresAt)
      // a minute later, by the service's clock: the short one has expired and goes with the next start
      const third = { ...session(userId, 3), expiresAt: now + HOUR }
      await store.start(third, 10, now + 60_000)
      expect(await redis.hkeys(hashKey(userId))).toEqual([third.id])
      expect(await redis.pexpiretime(hashKey(userId))).toBe(third.expiresAt)
    })
  },
)
