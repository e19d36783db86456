import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTesseraClient, type TesseraClientOptions } from '../src/index.js'
import {
  createLockManager,
  createSharedStorage,
  newCredentials,
  observedFetch,
  spoilStoredAccessToken,
  startListeningService,
} from './service.js'

let service: Awaited<ReturnType<typeof startListeningService>>
beforeAll(async () => {
  service = await startListeningService()
})
afterAll(() => service?.close())

/** Two tabs of one profile: two clients over one storage, each with its own observed fetch. */
async function twoTabs(
  options: Partial<TesseraClientOptions> & {
    beforeA?: Parameters<typeof observedFetch>[0]
    beforeB?: Parameters<typeof observedFetch>[0]
  } = {},
) {
  const storage = createSharedStorage()
  const { beforeA, beforeB, ...clientOptions } = options
  const fetchA = observedFetch(beforeA)
  const fetchB = observedFetch(beforeB)
  const ends: string[] = []
  const tab = (send: (request: Request) => Promise<Response>, name: string) =>
    createTesseraClient({
      baseUrl: service.baseUrl,
      storage,
      fetch: send,
      onSessionEnd: (reason) => ends.push(`${name} ${reason}`),
      ...clientOptions,
    })
  const a = tab(fetchA.send, 'a')
  const b = tab(fetchB.send, 'b')
  await createTesseraClient({ baseUrl: service.baseUrl, storage, locks: null }).register(newCredentials())
  const refreshes = () => fetchA.count('POST', '/auth/refresh') + fetchB.count('POST', '/auth/refresh')
  return { storage, a, b, fetchA, fetchB, ends, refreshes }
}

/** A promise and its resolve. */
function signal() {
  let fire = () => {}
  const fired = new Promise<void>((resolve) => (fire = resolve))
  return { fire, fired }
}

describe('tabs sharing a storage', () => {
  it('a tab whose call got a 401 after another tab refreshed uses the stored pair instead of refreshing', async () => {
    const aDone = signal()
    const { storage, a, b, fetchB, refreshes } = await twoTabs({
      locks: null,
      // tab b's call leaves with the old token but reaches the service only after tab a has refreshed
      beforeB: async (_request, seen) => {
        if (seen.path === '/auth/me' && fetchB.count('GET', '/auth/me') === 1) await aDone.fired
        return undefined
      },
    })
    spoilStoredAccessToken(storage)
    const callB = b.me()
    await new Promise((resolve) => setTimeout(resolve, 20))
    await a.me()
    aDone.fire()
    await callB
    expect(refreshes()).toBe(1)
    expect(fetchB.count('POST', '/auth/refresh')).toBe(0)
    expect(fetchB.requests.map((r) => r.authorization)).toEqual([
      expect.stringMatching(/AAAA$/),
      `Bearer ${a.getAccessToken()}`,
    ])
  })

  it('without Web Locks, the loser of a refresh race keeps the pair the winner stored: both stay logged in', async () => {
    const bRefreshing = signal()
    const aStored = signal()
    const { storage, a, b, ends, refreshes } = await twoTabs({
      locks: null,
      // both tabs send a refresh with the same token; a's reaches the service first, b's after a has stored
      beforeA: async (_request, seen) => {
        if (seen.path === '/auth/refresh') await bRefreshing.fired
        return undefined
      },
      beforeB: async (_request, seen) => {
        if (seen.path === '/auth/refresh') {
          bRefreshing.fire()
          await aStored.fired
        }
        return undefined
      },
    })
    spoilStoredAccessToken(storage)
    const callA = a.me().then((account) => {
      aStored.fire()
      return account
    })
    const [accountA, accountB] = await Promise.all([callA, b.me()])
    expect(accountB).toEqual(accountA)
    expect(refreshes()).toBe(2)
    expect(a.isLoggedIn() && b.isLoggedIn()).toBe(true)
    expect(a.getAccessToken()).toBe(b.getAccessToken())
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(ends).toEqual([])
  })

  it('with Web Locks, tabs that get a 401 at the same moment refresh once in all, in 20 rounds', async () => {
    const locks = createLockManager()
    const { storage, a, b, ends, refreshes } = await twoTabs({ locks })
    for (let round = 1; round <= 20; round++) {
      spoilStoredAccessToken(storage)
      const results = await Promise.all([a.fetch('/auth/me'), b.fetch('/auth/me'), a.me(), b.me()])
      expect(results.slice(0, 2).map((r) => (r as Response).status)).toEqual([200, 200])
      expect(refreshes()).toBe(round)
    }
    expect(a.isLoggedIn() && b.isLoggedIn()).toBe(true)
    expect(ends).toEqual([])
  })

  it('a tab that hangs holding the lock blocks the others only until the lock timeout', async () => {
    const locks = createLockManager()
    const { storage, a, refreshes } = await twoTabs({ locks, lockTimeoutMs: 300 })
    const release = locks.hold('tessera-refresh tessera.tokens')
    try {
      spoilStoredAccessToken(storage)
      const started = Date.now()
      expect((await a.fetch('/auth/me')).status).toBe(200)
      expect(Date.now() - started).toBeGreaterThanOrEqual(250)
      expect(refreshes()).toBe(1)
    } finally {
      release()
    }
  })

  it('no user callback runs while the lock is held', async () => {
    const locks = createLockManager()
    const heldDuringCallback: string[] = []
    const { storage, a } = await twoTabs({
      locks,
      onSessionEnd: (reason) => heldDuringCallback.push(`onSessionEnd ${reason} ${locks.held}`),
    })
    a.onChange((loggedIn) => heldDuringCallback.push(`onChange ${loggedIn} ${locks.held}`))
    await a.me()
    spoilStoredAccessToken(storage)
    await a.me()
    storage.setItem('tessera.tokens', JSON.stringify({ accessToken: 'x.y.z', refreshToken: 'x.y.z' }))
    await a.me().catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(heldDuringCallback).toEqual([
      'onChange true false', // the pair stored by the registration in another tab
      'onChange true false', // the spoiled token the test stored
      'onChange true false', // the refreshed pair
      'onChange true false', // the unusable pair the test stored
      'onChange false false', // discarded after the refused refresh
      'onSessionEnd refresh_refused false',
    ])
  })

  it('after logout in one tab, the other tab ends its session at its next call', async () => {
    const { a, b, ends } = await twoTabs({ locks: null })
    await a.me()
    await b.me()
    await a.logout()
    await expect(b.me()).rejects.toMatchObject({ status: 401, message: 'Not logged in' })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(ends).toEqual(['a logout', 'b ended_elsewhere'])
  })
})
