import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTesseraClient, TesseraError } from '../src/index.js'
import {
  createSharedStorage,
  newCredentials,
  observedFetch,
  spoil,
  spoilStoredAccessToken,
  startListeningService,
} from './service.js'

let service: Awaited<ReturnType<typeof startListeningService>>
beforeAll(async () => {
  service = await startListeningService()
})
afterAll(() => service?.close())

/** A logged-in client whose every request is observed. */
async function loggedInClient(options: { before?: Parameters<typeof observedFetch>[0] } = {}) {
  const storage = createSharedStorage()
  let registered = false
  const observed = observedFetch((request, seen) =>
    registered && options.before ? options.before(request, seen) : Promise.resolve(undefined),
  )
  const onSessionEnd = vi.fn()
  const client = createTesseraClient({
    baseUrl: service.baseUrl,
    storage,
    fetch: observed.send,
    onSessionEnd,
  })
  const credentials = newCredentials()
  await client.register(credentials)
  registered = true
  observed.requests.length = 0
  return { client, storage, observed, onSessionEnd, credentials }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

const answer = (status: number) =>
  new Response(JSON.stringify({ code: status, message: `status ${status}`, data: null }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  })

describe('account calls', () => {
  it('register logs in and answers the account in camelCase; login and me answer the same account', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const { email, password } = newCredentials()
    const registered = await client.register({ email: `  ${email.toUpperCase()} `, password })
    expect(registered).toEqual({
      id: expect.stringMatching(/^[1-9]\d{9}$/),
      email,
      emailVerified: false,
      username: null,
      nickname: null,
      avatarUrl: null,
      bio: null,
      role: 'user',
      status: 'active',
      passwordSet: true,
      providers: [],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      updatedAt: registered.createdAt,
    })
    expect(client.isLoggedIn()).toBe(true)
    expect(await client.me()).toEqual(registered)
    expect(await client.login({ email, password })).toEqual(registered)
  })

  it('a 400 carries the field errors, a 409 its message; neither is retryable', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const invalid = await failure(client.register({ email: 'no-at-sign', password: 'correct horse battery' }))
    expect(invalid).toBeInstanceOf(TesseraError)
    expect(invalid).toMatchObject({
      status: 400,
      message: 'Invalid request: /email must be a valid e-mail address',
      errors: [{ field: '/email', message: 'must be a valid e-mail address' }],
      retryable: false,
    })
    const credentials = newCredentials()
    await client.register(credentials)
    const taken = await failure(client.register(credentials))
    expect(taken).toMatchObject({
      status: 409,
      message: 'E-mail already registered',
      errors: [],
      retryable: false,
    })
  })

  it('a wrong password on login is a 401 that triggers no refresh and keeps the session', async () => {
    const { client, observed, onSessionEnd, credentials } = await loggedInClient()
    const token = client.getAccessToken()
    const wrong = await failure(client.login({ email: credentials.email, password: 'wrong password' }))
    expect(wrong).toMatchObject({ status: 401, message: 'E-mail or password wrong', retryable: false })
    expect(observed.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /auth/login'])
    expect(client.getAccessToken()).toBe(token)
    expect(onSessionEnd).not.toHaveBeenCalled()
  })

  it('a 401 from register triggers no refresh', async () => {
    const { client, observed } = await loggedInClient({
      before: async (_request, seen) => (seen.path === '/auth/register' ? answer(401) : undefined),
    })
    expect(await failure(client.register(newCredentials()))).toMatchObject({ status: 401 })
    expect(observed.count('POST', '/auth/refresh')).toBe(0)
  })

  it('a protected call while logged out is a TesseraError 401 Not logged in, sent nowhere', async () => {
    const observed = observedFetch()
    const client = createTesseraClient({ baseUrl: service.baseUrl, fetch: observed.send })
    expect(await failure(client.fetch('/auth/me'))).toMatchObject({ status: 401, message: 'Not logged in' })
    expect(observed.requests).toEqual([])
  })
})

describe('spec 5.6', () => {
  it('a protected call carries the Bearer header; a valid token makes one request and no refresh', async () => {
    const { client, observed } = await loggedInClient()
    const response = await client.fetch('/auth/me')
    expect(response.status).toBe(200)
    expect(observed.requests).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/auth/me',
        authorization: `Bearer ${client.getAccessToken()}`,
      }),
    ])
  })

  it('on a 401: one refresh, then the call once again with the same method, headers and a stream body read once', async () => {
    const { client, storage, observed } = await loggedInClient()
    spoilStoredAccessToken(storage)
    const spoiled = client.getAccessToken()
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"reason":"leaving"}'))
        controller.close()
      },
    })
    const response = await client.fetch(`${service.baseUrl}/auth/delete-refresh-token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Tag': 'logout-1' },
      body,
    })
    expect(response.status).toBe(200)
    const [first, refresh, retry, ...more] = observed.requests
    expect(more).toEqual([])
    expect(refresh).toMatchObject({ method: 'POST', path: '/auth/refresh', authorization: null })
    expect(first).toMatchObject({
      method: 'POST',
      path: '/auth/delete-refresh-token',
      authorization: `Bearer ${spoiled}`,
    })
    expect(retry).toEqual({
      ...first,
      authorization: `Bearer ${client.getAccessToken()}`,
      headers: expect.anything(),
    })
    expect({ ...retry?.headers, authorization: '' }).toEqual({ ...first?.headers, authorization: '' })
    expect(retry?.body).toBe('{"reason":"leaving"}')
    expect(client.getAccessToken()).not.toBe(spoiled)
  })

  it('the call is retried only once: a second 401 is returned as it is', async () => {
    const { client, observed } = await loggedInClient({
      before: async (_request, seen) => (seen.path === '/api/orders' ? answer(401) : undefined),
    })
    const response = await client.fetch('/api/orders')
    expect(response.status).toBe(401)
    expect(observed.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/orders',
      'POST /auth/refresh',
      'GET /api/orders',
    ])
  })

  it('a refused refresh discards both tokens, calls onSessionEnd once and rejects the call with the 401', async () => {
    const { client, storage, observed, onSessionEnd } = await loggedInClient()
    const pair = JSON.parse(storage.getItem('tessera.tokens')!)
    storage.setItem(
      'tessera.tokens',
      JSON.stringify({ accessToken: spoil(pair.accessToken), refreshToken: spoil(pair.refreshToken) }),
    )
    const changes: boolean[] = []
    client.onChange((loggedIn) => changes.push(loggedIn))
    const error = await failure(client.me())
    expect(error).toMatchObject({
      status: 401,
      message: 'Refresh token is invalid, expired or already used',
      retryable: false,
    })
    expect(observed.count('POST', '/auth/refresh')).toBe(1)
    expect(storage.items.size).toBe(0)
    expect(client.isLoggedIn()).toBe(false)
    expect(client.getAccessToken()).toBeNull()
    await client.fetch('/auth/me').catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(onSessionEnd.mock.calls).toEqual([['refresh_refused']])
    // the test's own write to the storage is seen as a change too, then the discard
    expect(changes).toEqual([true, false])
  })

  it('no refresh ahead of expiry and no timers: an idle client sends nothing, a valid token is never refreshed', async () => {
    const { client, observed } = await loggedInClient()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(observed.requests).toEqual([])
    await client.me()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(observed.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /auth/me'])
  })

  it('N concurrent calls that all get a 401 cause exactly one refresh, and all N are retried with the new token', async () => {
    const { client, storage, observed } = await loggedInClient()
    spoilStoredAccessToken(storage)
    const responses = await Promise.all(Array.from({ length: 8 }, () => client.fetch('/auth/me')))
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200))
    expect(observed.count('POST', '/auth/refresh')).toBe(1)
    const retries = observed.requests.filter((r) => r.path === '/auth/me').slice(8)
    expect(retries.map((r) => r.authorization)).toEqual(Array(8).fill(`Bearer ${client.getAccessToken()}`))
  })
})

describe('failures during refresh keep the session', () => {
  for (const [name, inject] of [
    ['a network error', () => Promise.reject(new TypeError('fetch failed'))],
    ['a 503', () => Promise.resolve(answer(503))],
    ['a 500', () => Promise.resolve(answer(500))],
    ['a 429', () => Promise.resolve(answer(429))],
  ] as const) {
    it(`${name} keeps the tokens and rejects the call with a retryable error`, async () => {
      let failing = true
      const { client, storage, onSessionEnd } = await loggedInClient({
        before: (_request, seen) =>
          failing && seen.path === '/auth/refresh' ? inject() : Promise.resolve(undefined),
      })
      spoilStoredAccessToken(storage)
      const stored = storage.getItem('tessera.tokens')
      const error = await failure(client.me())
      expect(error).toBeInstanceOf(TesseraError)
      expect(error.retryable).toBe(true)
      expect(storage.getItem('tessera.tokens')).toBe(stored)
      failing = false
      expect((await client.me()).email).toContain('@example.com')
      expect(onSessionEnd).not.toHaveBeenCalled()
    })
  }
})

describe('a protected call without an answer', () => {
  it('rejects with a retryable TesseraError of status 0 and keeps the session', async () => {
    let failing = true
    const { client, storage, onSessionEnd } = await loggedInClient({
      before: () => (failing ? Promise.reject(new TypeError('fetch failed')) : Promise.resolve(undefined)),
    })
    const stored = storage.getItem('tessera.tokens')
    const error = await failure(client.me())
    expect(error).toMatchObject({ status: 0, message: 'The service cannot be reached', retryable: true })
    expect(error.cause).toBeInstanceOf(TypeError)
    expect(storage.getItem('tessera.tokens')).toBe(stored)
    failing = false
    expect((await client.fetch('/auth/me')).status).toBe(200)
    expect(onSessionEnd).not.toHaveBeenCalled()
  })

  it('an abort by the caller stays an AbortError', async () => {
    const { client } = await loggedInClient()
    const error = await failure(client.fetch('/auth/me', { signal: AbortSignal.abort() }))
    expect((error as unknown as Error).name).toBe('AbortError')
  })
})

describe('logout', () => {
  it('calls POST /auth/delete-refresh-token, so the refresh token is refused from then on', async () => {
    const { client, storage, observed, onSessionEnd } = await loggedInClient()
    const { refreshToken } = JSON.parse(storage.getItem('tessera.tokens')!)
    await client.logout()
    expect(observed.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /auth/delete-refresh-token'])
    expect(client.isLoggedIn()).toBe(false)
    const refused = await fetch(`${service.baseUrl}/auth/refresh`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    })
    expect(refused.status).toBe(401)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(onSessionEnd.mock.calls).toEqual([['logout']])
  })

  it('refreshes first when the access token is refused', async () => {
    const { client, storage, observed } = await loggedInClient()
    spoilStoredAccessToken(storage)
    await client.logout()
    expect(observed.requests.map((r) => `${r.method} ${r.path} ${r.authorization ? 'bearer' : ''}`)).toEqual([
      'POST /auth/delete-refresh-token bearer',
      'POST /auth/refresh ',
      'POST /auth/delete-refresh-token bearer',
    ])
    expect(client.isLoggedIn()).toBe(false)
  })

  it('discards the tokens locally when the service cannot be reached', async () => {
    const { client, storage, onSessionEnd } = await loggedInClient({
      before: () => Promise.reject(new TypeError('fetch failed')),
    })
    await client.logout()
    expect(storage.items.size).toBe(0)
    expect(client.isLoggedIn()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(onSessionEnd.mock.calls).toEqual([['logout']])
  })
})

describe('no module-level state', () => {
  it('two clients in one process never share tokens', async () => {
    const alice = createTesseraClient({ baseUrl: service.baseUrl })
    const bob = createTesseraClient({ baseUrl: service.baseUrl })
    const aliceCredentials = newCredentials()
    const bobCredentials = newCredentials()
    await alice.register(aliceCredentials)
    expect(bob.isLoggedIn()).toBe(false)
    await bob.register(bobCredentials)
    expect(alice.getAccessToken()).not.toBe(bob.getAccessToken())
    expect((await alice.me()).email).toBe(aliceCredentials.email)
    expect((await bob.me()).email).toBe(bobCredentials.email)
    await alice.logout()
    expect(alice.isLoggedIn()).toBe(false)
    expect((await bob.me()).email).toBe(bobCredentials.email)
  })
})
