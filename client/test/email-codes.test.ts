import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTesseraClient, type TesseraError } from '../src/index.js'
import {
  createLockManager,
  createSharedStorage,
  mailedCode,
  newCredentials,
  observedFetch,
  spoilStoredAccessToken,
  startListeningService,
  wrongCode,
} from './service.js'

let service: Awaited<ReturnType<typeof startListeningService>>
beforeAll(async () => {
  // development without SMTP_URL: the service writes each message to its outbox folder
  service = await startListeningService({ NODE_ENV: 'development' })
})
afterAll(() => service?.close())

const INVALID_CODE = 'Invalid or expired verification code'

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

/** A client whose every request is observed, with its own storage; `before` may hold a request or answer it. */
function newClient(options: { before?: Parameters<typeof observedFetch>[0] } = {}) {
  const storage = createSharedStorage()
  const observed = observedFetch(options.before)
  const onSessionEnd = vi.fn()
  const client = createTesseraClient({
    baseUrl: service.baseUrl,
    storage,
    fetch: observed.send,
    onSessionEnd,
  })
  /** What it has sent since the last call, as `METHOD /path bearer?`; forgotten once read. */
  const sent = () =>
    observed.requests.splice(0).map((r) => `${r.method} ${r.path}${r.authorization ? ' bearer' : ''}`)
  return { client, storage, observed, onSessionEnd, sent }
}

/** A client logged in to a new account (registered by it); nothing sent yet counted. */
async function registeredClient(options: Parameters<typeof newClient>[0] = {}) {
  const device = newClient(options)
  const credentials = newCredentials()
  const account = await device.client.register(credentials)
  device.sent()
  return { ...device, credentials, account }
}

/** Whether the service still takes `refreshToken` (a raw call, which uses it up when it does). */
async function refreshTokenWorks(refreshToken: string) {
  const answer = await fetch(`${service.baseUrl}/auth/refresh`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ refresh_token: refreshToken }),
  })
  return answer.status === 200
}

const storedPair = (storage: ReturnType<typeof createSharedStorage>) =>
  JSON.parse(storage.getItem('tessera.tokens') ?? 'null') as {
    accessToken: string
    refreshToken: string
  } | null

describe('sendCode', () => {
  it('a public purpose names the address and is sent without the Bearer header, logged in or not', async () => {
    const { client, observed, sent, credentials } = await registeredClient()
    expect(await client.sendCode({ email: credentials.email, purpose: 'reset_password' })).toBeUndefined()
    expect(JSON.parse(observed.requests[0]?.body ?? '')).toEqual({
      email: credentials.email,
      purpose: 'reset_password',
    })
    expect(sent()).toEqual(['POST /auth/email/send-code'])
    expect(await mailedCode(service.mailbox, credentials.email)).toMatch(/^\d{6}$/)
    const stranger = newClient()
    await stranger.client.sendCode({ email: newCredentials().email, purpose: 'login' })
    expect(stranger.sent()).toEqual(['POST /auth/email/send-code'])
  })

  it("an account's purpose is a protected call: verify_email and delete_account name nothing, change_email the new address", async () => {
    const { client, observed, sent } = await registeredClient()
    await client.sendCode({ purpose: 'verify_email' })
    await client.sendCode({ purpose: 'delete_account' })
    const newEmail = newCredentials().email
    await client.sendCode({ purpose: 'change_email', newEmail })
    expect(observed.requests.map((r) => JSON.parse(r.body))).toEqual([
      { purpose: 'verify_email' },
      { purpose: 'delete_account' },
      { purpose: 'change_email', new_email: newEmail },
    ])
    expect(sent()).toEqual([
      'POST /auth/me/send-code bearer',
      'POST /auth/me/send-code bearer',
      'POST /auth/me/send-code bearer',
    ])
    expect(await mailedCode(service.mailbox, newEmail)).toMatch(/^\d{6}$/)
  })

  it("an account's purpose refreshes once on a 401, and is 401 Not logged in, sent nowhere, while logged out", async () => {
    const { client, storage, sent } = await registeredClient()
    spoilStoredAccessToken(storage)
    await client.sendCode({ purpose: 'verify_email' })
    expect(sent()).toEqual([
      'POST /auth/me/send-code bearer',
      'POST /auth/refresh',
      'POST /auth/me/send-code bearer',
    ])
    const stranger = newClient()
    expect(await failure(stranger.client.sendCode({ purpose: 'verify_email' }))).toMatchObject({
      status: 401,
      message: 'Not logged in',
    })
    expect(stranger.sent()).toEqual([])
  })

  it('asked again too soon: a retryable 429 that says how long to wait', async () => {
    const { client, credentials } = await registeredClient()
    await client.sendCode({ email: credentials.email, purpose: 'login' })
    const tooSoon = await failure(client.sendCode({ email: credentials.email, purpose: 'login' }))
    expect(tooSoon).toMatchObject({ status: 429, retryable: true })
    expect(tooSoon.retryAfter).toBeGreaterThan(0)
    expect(tooSoon.retryAfter).toBeLessThanOrEqual(60)
  })
})

describe('register with a code', () => {
  it('the code mailed for register verifies the address at once; a wrong one is a 400 and logs nobody in', async () => {
    const { client, sent } = newClient()
    const credentials = newCredentials()
    await client.sendCode({ email: credentials.email, purpose: 'register' })
    const code = await mailedCode(service.mailbox, credentials.email)
    const refused = await failure(client.register({ ...credentials, code: wrongCode(code) }))
    expect(refused).toMatchObject({ status: 400, message: INVALID_CODE, retryable: false })
    expect(client.isLoggedIn()).toBe(false)
    const account = await client.register({ ...credentials, code })
    expect(account).toEqual({
      id: expect.stringMatching(/^[1-9]\d{9}$/),
      email: credentials.email,
      emailVerified: true,
      username: null,
      nickname: null,
      avatarUrl: null,
      bio: null,
      role: 'user',
      status: 'active',
      passwordSet: true,
      providers: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(client.isLoggedIn()).toBe(true)
    expect(await client.me()).toEqual(account)
    expect(sent()).toEqual([
      'POST /auth/email/send-code',
      'POST /auth/register',
      'POST /auth/register',
      'GET /auth/me bearer',
    ])
  })
})

describe('loginWithCode', () => {
  it('logs in with the code mailed for login, which proves the address, and stores the pair as login does', async () => {
    const { credentials, account } = await registeredClient()
    const { client, storage, sent } = newClient()
    const changes: boolean[] = []
    client.onChange((loggedIn) => changes.push(loggedIn))
    await client.sendCode({ email: credentials.email, purpose: 'login' })
    const code = await mailedCode(service.mailbox, credentials.email)
    // docs/api.md R4.15.1: the address of an account registered without a code is proved, and the password that
    // anyone could have set before it was is gone
    expect(await client.loginWithCode(credentials.email.toUpperCase(), code)).toEqual({
      ...account,
      emailVerified: true,
      passwordSet: false,
    })
    expect(sent()).toEqual(['POST /auth/email/send-code', 'POST /auth/login/email-code'])
    expect(storedPair(storage)).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String) })
    expect((await client.me()).email).toBe(credentials.email)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(changes).toEqual([true])
  })

  it('a wrong code is the 401 of a wrong password: no refresh, and the session in place is kept', async () => {
    const { client, storage, sent, onSessionEnd, credentials } = await registeredClient()
    const stored = storage.getItem('tessera.tokens')
    await client.sendCode({ email: credentials.email, purpose: 'login' })
    const code = await mailedCode(service.mailbox, credentials.email)
    const wrong = await failure(client.loginWithCode(credentials.email, wrongCode(code)))
    expect(wrong).toMatchObject({ status: 401, message: 'E-mail or password wrong', retryable: false })
    expect(sent()).toEqual(['POST /auth/email/send-code', 'POST /auth/login/email-code'])
    expect(storage.getItem('tessera.tokens')).toBe(stored)
    expect(onSessionEnd).not.toHaveBeenCalled()
  })
})

describe('resetPassword', () => {
  it('sets the new password with the code mailed for reset_password and logs in; every other session ends', async () => {
    const { storage: otherStorage, credentials, account } = await registeredClient()
    const otherRefreshToken = storedPair(otherStorage)?.refreshToken ?? ''
    const { client, sent } = newClient()
    await client.sendCode({ email: credentials.email, purpose: 'reset_password' })
    const code = await mailedCode(service.mailbox, credentials.email)
    const newPassword = 'a brand new passphrase'
    // a reset proves the address too (docs/api.md R4.17.1)
    const reset = await client.resetPassword(credentials.email, code, newPassword)
    expect(reset).toEqual({ ...account, emailVerified: true })
    expect(sent()).toEqual(['POST /auth/email/send-code', 'POST /auth/password/reset'])
    expect(client.isLoggedIn()).toBe(true)
    expect(await refreshTokenWorks(otherRefreshToken)).toBe(false)
    const login = newClient().client
    expect(await failure(login.login(credentials))).toMatchObject({ status: 401 })
    expect(await login.login({ email: credentials.email, password: newPassword })).toEqual(reset)
    // the code is used up
    expect(
      await failure(client.resetPassword(credentials.email, code, 'yet another passphrase')),
    ).toMatchObject({ status: 400, message: INVALID_CODE })
  })
})

describe('changePassword', () => {
  it('stores the new pair of the answer: the old refresh token is refused, the new one works', async () => {
    const { client, storage, sent, onSessionEnd, credentials, account } = await registeredClient()
    const before = storedPair(storage)
    const newPassword = 'a brand new passphrase'
    expect(await client.changePassword(credentials.password, newPassword)).toEqual(account)
    expect(sent()).toEqual(['POST /auth/password/change bearer'])
    const after = storedPair(storage)
    expect(after?.refreshToken).not.toBe(before?.refreshToken)
    expect(await refreshTokenWorks(before?.refreshToken ?? '')).toBe(false)
    // the stored pair is good: a refused access token is refreshed with it
    spoilStoredAccessToken(storage)
    expect(await client.me()).toEqual(account)
    expect(sent()).toEqual(['GET /auth/me bearer', 'POST /auth/refresh', 'GET /auth/me bearer'])
    expect(await newClient().client.login({ email: credentials.email, password: newPassword })).toEqual(
      account,
    )
    expect(onSessionEnd).not.toHaveBeenCalled()
  })

  it('a wrong current password is a 400 that triggers no refresh and keeps the session', async () => {
    const { client, storage, sent, onSessionEnd } = await registeredClient()
    const stored = storage.getItem('tessera.tokens')
    const wrong = await failure(client.changePassword('not my password', 'a brand new passphrase'))
    expect(wrong).toMatchObject({ status: 400, message: 'Password is incorrect', retryable: false })
    expect(sent()).toEqual(['POST /auth/password/change bearer'])
    expect(storage.getItem('tessera.tokens')).toBe(stored)
    expect(client.isLoggedIn()).toBe(true)
    expect(onSessionEnd).not.toHaveBeenCalled()
  })

  it('refreshes once on a 401 and sends the change again with the new access token', async () => {
    const { client, storage, observed, sent, credentials } = await registeredClient()
    spoilStoredAccessToken(storage)
    const spoiled = client.getAccessToken()
    await client.changePassword(credentials.password, 'a brand new passphrase')
    const [first, , retry] = observed.requests
    expect(sent()).toEqual([
      'POST /auth/password/change bearer',
      'POST /auth/refresh',
      'POST /auth/password/change bearer',
    ])
    expect(first?.authorization).toBe(`Bearer ${spoiled}`)
    expect(retry?.authorization).not.toBe(`Bearer ${spoiled}`)
    expect(retry?.body).toBe(first?.body)
    expect(client.isLoggedIn()).toBe(true)
    expect((await client.me()).email).toBe(credentials.email)
  })

  it('while logged out: 401 Not logged in, sent nowhere', async () => {
    const { client, sent } = newClient()
    expect(await failure(client.changePassword('old passphrase', 'new passphrase'))).toMatchObject({
      status: 401,
      message: 'Not logged in',
    })
    expect(sent()).toEqual([])
  })
})

describe('a pair that logs in is never overwritten by an older one', () => {
  it("another tab's refresh on its way holds the change back until it has stored its pair; the change's pair stays", async () => {
    const storage = createSharedStorage()
    const locks = createLockManager()
    let releaseRefresh = () => {}
    const refreshHeld = new Promise<void>((resolve) => (releaseRefresh = resolve))
    let refreshSent = () => {}
    const refreshOnItsWay = new Promise<void>((resolve) => (refreshSent = resolve))
    const ends: string[] = []
    let refreshed = ''
    const tab = (before?: Parameters<typeof observedFetch>[0]) => {
      const observed = observedFetch(before)
      const client = createTesseraClient({
        baseUrl: service.baseUrl,
        storage,
        locks,
        fetch: observed.send,
        onSessionEnd: (reason) => ends.push(reason),
      })
      return { client, observed }
    }
    const a = tab()
    // tab b's refresh reaches the service at once, and its answer comes back only when released
    const b = tab(async (request, seen) => {
      if (seen.path !== '/auth/refresh') return undefined
      const answer = await fetch(request)
      refreshed = ((await answer.clone().json()) as { data: { access_token: string } }).data.access_token
      refreshSent()
      await refreshHeld
      return answer
    })
    const credentials = newCredentials()
    await a.client.register(credentials)
    spoilStoredAccessToken(storage)
    const bCall = b.client.me()
    await refreshOnItsWay
    // tab a changes the password meanwhile: it waits for the refresh lock, which tab b holds
    const change = a.client.changePassword(credentials.password, 'a brand new passphrase')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(a.observed.count('POST', '/auth/password/change')).toBe(0)
    releaseRefresh()
    await change
    expect(await bCall).toMatchObject({ email: credentials.email })
    // the change went out with the pair of b's refresh, and its own pair is the one stored
    expect(a.observed.requests.at(-1)).toMatchObject({
      path: '/auth/password/change',
      authorization: `Bearer ${refreshed}`,
    })
    const changePair = storedPair(storage)
    expect(changePair?.accessToken).not.toBe(refreshed)
    expect(await a.client.me()).toMatchObject({ email: credentials.email })
    expect(await b.client.me()).toMatchObject({ email: credentials.email })
    expect(storedPair(storage)).toEqual(changePair)
    expect(ends).toEqual([])
  })

  it("a login of this client while its refresh is on its way (no lock to wait for) keeps the login's pair", async () => {
    let releaseRefresh = () => {}
    const refreshHeld = new Promise<void>((resolve) => (releaseRefresh = resolve))
    let refreshSent = () => {}
    const refreshOnItsWay = new Promise<void>((resolve) => (refreshSent = resolve))
    const { client, storage, observed, credentials } = await registeredClient({
      before: async (request, seen) => {
        if (seen.path !== '/auth/refresh') return undefined
        const answer = await fetch(request)
        refreshSent()
        await refreshHeld
        return answer
      },
    })
    spoilStoredAccessToken(storage)
    const call = client.me()
    await refreshOnItsWay
    await client.login(credentials)
    const loginPair = storedPair(storage)
    releaseRefresh()
    expect((await call).email).toBe(credentials.email)
    expect(storedPair(storage)).toEqual(loginPair)
    // the call was repeated with the login's access token
    expect(observed.requests.at(-1)).toMatchObject({
      path: '/auth/me',
      authorization: `Bearer ${loginPair?.accessToken}`,
    })
  })
})

describe('changeEmail and verifyEmail', () => {
  it('changeEmail takes the code mailed to the new address and answers the account with it', async () => {
    const { client, sent, account } = await registeredClient()
    const newEmail = newCredentials().email
    await client.sendCode({ purpose: 'change_email', newEmail })
    const code = await mailedCode(service.mailbox, newEmail)
    expect(await failure(client.changeEmail(newEmail, wrongCode(code)))).toMatchObject({
      status: 400,
      message: INVALID_CODE,
    })
    const changed = await client.changeEmail(newEmail, code)
    expect(changed).toEqual({ ...account, email: newEmail, emailVerified: true })
    expect(await client.me()).toEqual(changed)
    expect(sent()).toEqual([
      'POST /auth/me/send-code bearer',
      'POST /auth/email/change bearer',
      'POST /auth/email/change bearer',
      'GET /auth/me bearer',
    ])
    expect(client.isLoggedIn()).toBe(true)
  })

  it('verifyEmail takes the code mailed for verify_email and answers the verified account', async () => {
    const { client, sent, account, credentials } = await registeredClient()
    expect(account.emailVerified).toBe(false)
    await client.sendCode({ purpose: 'verify_email' })
    const code = await mailedCode(service.mailbox, credentials.email)
    expect(await failure(client.verifyEmail(wrongCode(code)))).toMatchObject({
      status: 400,
      message: INVALID_CODE,
      retryable: false,
    })
    expect(await client.verifyEmail(code)).toEqual({ ...account, emailVerified: true })
    expect((await client.me()).emailVerified).toBe(true)
    expect(sent()).toEqual([
      'POST /auth/me/send-code bearer',
      'POST /auth/email/verify bearer',
      'POST /auth/email/verify bearer',
      'GET /auth/me bearer',
    ])
  })
})

describe('deleteAccount', () => {
  it('with the password: the account is gone, the tokens discarded, the listeners told', async () => {
    const { client, storage, sent, onSessionEnd, credentials } = await registeredClient()
    const changes: boolean[] = []
    client.onChange((loggedIn) => changes.push(loggedIn))
    const wrong = await failure(client.deleteAccount({ password: 'not my password' }))
    expect(wrong).toMatchObject({ status: 400, message: 'Password is incorrect' })
    expect(client.isLoggedIn()).toBe(true)
    expect(await client.deleteAccount({ password: credentials.password })).toBeUndefined()
    expect(sent()).toEqual(['POST /auth/delete bearer', 'POST /auth/delete bearer'])
    expect(storage.items.size).toBe(0)
    expect(client.isLoggedIn()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(onSessionEnd.mock.calls).toEqual([['account_deleted']])
    expect(changes).toEqual([false])
    expect(await failure(newClient().client.login(credentials))).toMatchObject({ status: 401 })
  })

  it('with the code mailed for delete_account; a wrong code keeps the account and the session', async () => {
    const { client, observed, onSessionEnd, credentials } = await registeredClient()
    await client.sendCode({ purpose: 'delete_account' })
    const code = await mailedCode(service.mailbox, credentials.email)
    expect(await failure(client.deleteAccount({ code: wrongCode(code) }))).toMatchObject({
      status: 400,
      message: INVALID_CODE,
    })
    expect(client.isLoggedIn()).toBe(true)
    await client.deleteAccount({ code })
    expect(JSON.parse(observed.requests.at(-1)?.body ?? '')).toEqual({ verification_code: code })
    expect(client.isLoggedIn()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(onSessionEnd.mock.calls).toEqual([['account_deleted']])
  })

  it('no answer keeps the tokens: the account may still be there', async () => {
    let failing = false
    const { client, storage, onSessionEnd } = await registeredClient({
      before: () => (failing ? Promise.reject(new TypeError('fetch failed')) : Promise.resolve(undefined)),
    })
    failing = true
    const stored = storage.getItem('tessera.tokens')
    expect(await failure(client.deleteAccount({ password: 'correct horse battery' }))).toMatchObject({
      status: 0,
      retryable: true,
    })
    expect(storage.getItem('tessera.tokens')).toBe(stored)
    expect(onSessionEnd).not.toHaveBeenCalled()
  })
})
