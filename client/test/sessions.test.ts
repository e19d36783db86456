import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTesseraClient, type LogoutScope, TesseraError } from '../src/index.js'
import {
  createSharedStorage,
  newCredentials,
  observedFetch,
  spoilStoredAccessToken,
  startListeningService,
} from './service.js'

type Service = Awaited<ReturnType<typeof startListeningService>>
/** AUTH_SESSIONS=per-device: each client below is a device of its own, with a session of its own. */
let perDevice: Service
/** The default, the specification's: one session per user. */
let single: Service
beforeAll(async () => {
  ;[perDevice, single] = await Promise.all([
    startListeningService({ AUTH_SESSIONS: 'per-device' }),
    startListeningService(),
  ])
})
afterAll(() => Promise.all([perDevice?.close(), single?.close()]))

const FIREFOX_ON_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const SAFARI_ON_IOS =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
/** ISO 8601 in UTC with milliseconds, as the API writes every instant. */
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
/** Where the tests' requests come from, as the service coarsens it (a /24). */
const LOOPBACK_NETWORK = '127.0.0.0/24'

/** A device: a client with a storage of its own, whose every request carries `userAgent` and is observed. */
function device(
  userAgent: string,
  options: { service?: Service; before?: Parameters<typeof observedFetch>[0] } = {},
) {
  const storage = createSharedStorage()
  const observed = observedFetch(options.before)
  const onSessionEnd = vi.fn()
  const client = createTesseraClient({
    baseUrl: (options.service ?? perDevice).baseUrl,
    storage,
    fetch: (request) => {
      const headers = new Headers(request.headers)
      headers.set('User-Agent', userAgent)
      return observed.send(new Request(request, { headers, duplex: 'half' } as RequestInit))
    },
    onSessionEnd,
  })
  /** What it has sent since the last call, as `METHOD /path?query`; forgotten once read. */
  const sent = () => observed.requests.splice(0).map((r) => `${r.method} ${r.path}${r.query}`)
  return { client, storage, observed, onSessionEnd, sent }
}

/** One account logged in on a laptop (registered there) and a phone, in that order; nothing sent yet counted. */
async function laptopAndPhone(options: { service?: Service } = {}) {
  const credentials = newCredentials()
  const laptop = device(FIREFOX_ON_LINUX, options)
  const phone = device(SAFARI_ON_IOS, options)
  await laptop.client.register(credentials)
  await phone.client.login(credentials)
  laptop.sent()
  phone.sent()
  return { laptop, phone, credentials }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

/** Whether the service still takes this device's refresh token: its access token spoiled, one call must refresh. */
async function refreshes({ client, storage }: ReturnType<typeof device>) {
  spoilStoredAccessToken(storage)
  return client.me().then(
    () => true,
    (error: TesseraError) => {
      expect(error).toMatchObject({ status: 401, retryable: false })
      return false
    },
  )
}

/** Waits for the callbacks, which the client calls in a microtask. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 10))

describe('sessions per device (AUTH_SESSIONS=per-device)', () => {
  it("sessions() lists the account's devices in camelCase, most recently used first, the caller's own current", async () => {
    const { laptop, phone } = await laptopAndPhone()
    const seen = await laptop.client.sessions()
    expect(laptop.sent()).toEqual(['GET /auth/sessions'])
    expect(laptop.observed.requests).toEqual([])
    expect(seen).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        createdAt: expect.stringMatching(INSTANT),
        lastUsedAt: expect.stringMatching(INSTANT),
        device: 'Safari on iOS',
        clientAddress: LOOPBACK_NETWORK,
        current: false,
      },
      {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        createdAt: expect.stringMatching(INSTANT),
        lastUsedAt: expect.stringMatching(INSTANT),
        device: 'Firefox on Linux',
        clientAddress: LOOPBACK_NETWORK,
        current: true,
      },
    ])
    // the phone sees the same sessions, its own marked
    const fromPhone = await phone.client.sessions()
    expect(fromPhone.map(({ id, current }) => [id, current])).toEqual(
      seen.map(({ id, current }) => [id, !current]),
    )
  })

  it("endSession(id) ends that device's session alone: its refresh is refused, the caller's goes on", async () => {
    const { laptop, phone } = await laptopAndPhone()
    const [phoneSession, laptopSession] = await laptop.client.sessions()
    laptop.sent()
    expect(await laptop.client.endSession(phoneSession!.id)).toBeUndefined()
    expect(laptop.sent()).toEqual([`DELETE /auth/sessions/${phoneSession!.id}`])
    expect((await laptop.client.sessions()).map(({ id }) => id)).toEqual([laptopSession!.id])

    expect(await refreshes(phone)).toBe(false)
    await settled()
    expect(phone.onSessionEnd.mock.calls).toEqual([['refresh_refused']])
    expect(phone.client.isLoggedIn()).toBe(false)
    expect(await refreshes(laptop)).toBe(true)
    expect(laptop.onSessionEnd).not.toHaveBeenCalled()
  })

  it("endSession of an id that is not one of the caller's sessions is a 404, whether it exists or not", async () => {
    const { laptop } = await laptopAndPhone()
    const stranger = device(FIREFOX_ON_LINUX)
    await stranger.client.register(newCredentials())
    const [strangerSession] = await stranger.client.sessions()
    for (const id of [strangerSession!.id, '0123456789abcdef0123456789abcdef']) {
      const error = await failure(laptop.client.endSession(id))
      expect(error).toBeInstanceOf(TesseraError)
      expect(error).toMatchObject({ status: 404, errors: [], retryable: false })
    }
    // nobody's session ended, and a 404 is not taken for an expired token
    expect(await stranger.client.sessions()).toEqual([{ ...strangerSession, lastUsedAt: expect.any(String) }])
    expect((await laptop.client.sessions()).length).toBe(2)
    expect(laptop.observed.count('POST', '/auth/refresh')).toBe(0)
    expect(laptop.client.isLoggedIn()).toBe(true)
  })

  it("logout({ scope: 'others' }) ends the other devices' sessions and keeps this one, and its tokens", async () => {
    const { laptop, phone, credentials } = await laptopAndPhone()
    const tablet = device(SAFARI_ON_IOS)
    await tablet.client.login(credentials)
    const stored = laptop.storage.getItem('tessera.tokens')
    await laptop.client.logout({ scope: 'others' })
    expect(laptop.sent()).toEqual(['POST /auth/delete-refresh-token?scope=others'])
    expect(laptop.storage.getItem('tessera.tokens')).toBe(stored)
    expect(laptop.client.isLoggedIn()).toBe(true)
    expect(await laptop.client.sessions()).toEqual([expect.objectContaining({ current: true })])

    expect(await refreshes(phone)).toBe(false)
    expect(await refreshes(tablet)).toBe(false)
    expect(await refreshes(laptop)).toBe(true)
    await settled()
    expect(laptop.onSessionEnd).not.toHaveBeenCalled()
  })

  it("logout({ scope: 'all' }) ends every session, this one included, and discards the tokens as logout() does", async () => {
    const { laptop, phone } = await laptopAndPhone()
    const { refreshToken } = JSON.parse(laptop.storage.getItem('tessera.tokens')!)
    await laptop.client.logout({ scope: 'all' })
    expect(laptop.sent()).toEqual(['POST /auth/delete-refresh-token?scope=all'])
    expect(laptop.storage.items.size).toBe(0)
    expect(laptop.client.isLoggedIn()).toBe(false)
    await settled()
    expect(laptop.onSessionEnd.mock.calls).toEqual([['logout']])
    const refused = await fetch(`${perDevice.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    })
    expect(refused.status).toBe(401)
    expect(await refreshes(phone)).toBe(false)
  })

  it('logout() without a scope ends this session alone, as before', async () => {
    const { laptop, phone } = await laptopAndPhone()
    await laptop.client.logout()
    expect(laptop.sent()).toEqual(['POST /auth/delete-refresh-token'])
    expect(laptop.client.isLoggedIn()).toBe(false)
    expect(await phone.client.sessions()).toEqual([
      expect.objectContaining({ device: 'Safari on iOS', current: true }),
    ])
  })

  it('a scope the service refuses is its 400, and the tokens stay', async () => {
    const { laptop } = await laptopAndPhone()
    // what a caller without the types could pass
    const error = await failure(laptop.client.logout({ scope: 'everywhere' as LogoutScope }))
    expect(error).toMatchObject({ status: 400, retryable: false })
    expect(laptop.sent()).toEqual(['POST /auth/delete-refresh-token?scope=everywhere'])
    expect(laptop.client.isLoggedIn()).toBe(true)
    expect((await laptop.client.sessions()).length).toBe(2)
  })

  it('sessions(), endSession() and a scoped logout refresh once on a 401 and are repeated with the new token', async () => {
    const { laptop, phone, credentials } = await laptopAndPhone()
    const tablet = device(SAFARI_ON_IOS)
    await tablet.client.login(credentials)

    spoilStoredAccessToken(laptop.storage)
    const sessions = await laptop.client.sessions()
    expect(sessions.length).toBe(3)
    expect(laptop.sent()).toEqual(['GET /auth/sessions', 'POST /auth/refresh', 'GET /auth/sessions'])

    // its refresh made the laptop's own session the most recently used; the tablet's is the first other one
    expect(sessions.map(({ current }) => current)).toEqual([true, false, false])
    const tablets = sessions[1]!
    spoilStoredAccessToken(laptop.storage)
    await laptop.client.endSession(tablets.id)
    expect(laptop.sent()).toEqual([
      `DELETE /auth/sessions/${tablets.id}`,
      'POST /auth/refresh',
      `DELETE /auth/sessions/${tablets.id}`,
    ])

    spoilStoredAccessToken(laptop.storage)
    await laptop.client.logout({ scope: 'others' })
    expect(laptop.sent()).toEqual([
      'POST /auth/delete-refresh-token?scope=others',
      'POST /auth/refresh',
      'POST /auth/delete-refresh-token?scope=others',
    ])
    expect(laptop.client.isLoggedIn()).toBe(true)
    expect(await refreshes(phone)).toBe(false)
    expect(await refreshes(tablet)).toBe(false)
  })
})

describe('sessions with one session per user (AUTH_SESSIONS=single, the default)', () => {
  it("sessions() shows the one session, current; logout({ scope: 'others' }) keeps it", async () => {
    const laptop = device(FIREFOX_ON_LINUX, { service: single })
    await laptop.client.register(newCredentials())
    const [session, ...more] = await laptop.client.sessions()
    expect(more).toEqual([])
    expect(session).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      createdAt: expect.stringMatching(INSTANT),
      lastUsedAt: expect.stringMatching(INSTANT),
      device: 'Firefox on Linux',
      clientAddress: LOOPBACK_NETWORK,
      current: true,
    })
    await laptop.client.logout({ scope: 'others' })
    expect(laptop.client.isLoggedIn()).toBe(true)
    expect(await refreshes(laptop)).toBe(true)
    expect((await laptop.client.sessions()).map(({ id }) => id)).toEqual([session!.id])
  })
})

describe('sessions without the answer of the service', () => {
  it('while logged out, sessions(), endSession() and a scoped logout reject with 401 Not logged in and send nothing', async () => {
    const observed = observedFetch()
    const client = createTesseraClient({ baseUrl: perDevice.baseUrl, fetch: observed.send })
    for (const call of [
      () => client.sessions(),
      () => client.endSession('0123456789abcdef0123456789abcdef'),
      () => client.logout({ scope: 'others' }),
      () => client.logout({ scope: 'all' }),
    ]) {
      const error = await failure(call())
      expect(error).toBeInstanceOf(TesseraError)
      expect(error).toMatchObject({ status: 401, message: 'Not logged in' })
    }
    // a plain logout while logged out still never rejects
    await client.logout()
    expect(observed.requests).toEqual([])
  })

  it("a scoped logout that gets no answer rejects with the retryable error: 'others' keeps the tokens, 'all' discards them", async () => {
    let failing = false
    const laptop = device(FIREFOX_ON_LINUX, {
      before: () => (failing ? Promise.reject(new TypeError('fetch failed')) : Promise.resolve(undefined)),
    })
    await laptop.client.register(newCredentials())
    failing = true
    const stored = laptop.storage.getItem('tessera.tokens')
    const others = await failure(laptop.client.logout({ scope: 'others' }))
    expect(others).toMatchObject({ status: 0, message: 'The service cannot be reached', retryable: true })
    expect(laptop.storage.getItem('tessera.tokens')).toBe(stored)

    const all = await failure(laptop.client.logout({ scope: 'all' }))
    expect(all).toMatchObject({ status: 0, retryable: true })
    expect(laptop.client.isLoggedIn()).toBe(false)
    await settled()
    expect(laptop.onSessionEnd.mock.calls).toEqual([['logout']])
  })

  it('sessions() and endSession() without an answer reject with a retryable TesseraError 0 and keep the session', async () => {
    let failing = false
    const laptop = device(FIREFOX_ON_LINUX, {
      before: () => (failing ? Promise.reject(new TypeError('fetch failed')) : Promise.resolve(undefined)),
    })
    await laptop.client.register(newCredentials())
    failing = true
    for (const call of [() => laptop.client.sessions(), () => laptop.client.endSession('0'.repeat(32))]) {
      expect(await failure(call())).toMatchObject({ status: 0, retryable: true })
    }
    expect(laptop.client.isLoggedIn()).toBe(true)
    await settled()
    expect(laptop.onSessionEnd).not.toHaveBeenCalled()
  })
})
