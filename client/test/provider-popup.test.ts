import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTesseraClient, type Popup, type PopupOpener, type TesseraError } from '../src/index.js'
import { createLockManager, createSharedStorage, newCredentials, startListeningService } from './service.js'

// The popup's logic, with a stand-in for the page's window (the option `window`): which messages count, the timeout,
// the closed popup. The real popup, provider and callback page are test/demo/provider-popup.browser.test.ts's.

let service: Awaited<ReturnType<typeof startListeningService>>
beforeAll(async () => {
  service = await startListeningService()
})
afterAll(() => service?.close())

const RESULT = 'auth:oauth:result'

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

/**
 * A page's window as the client uses it: `open` records the popup it opens (or refuses, as a popup blocker does), and
 * `post` delivers a message as the browser would, naming its origin and its source window.
 */
function fakeWindow(options: { blocked?: boolean; origin?: string } = {}) {
  const listeners = new Set<(event: MessageEvent) => void>()
  const popup = {
    closed: false,
    close() {
      popup.closed = true
    },
  }
  const opened: Array<{ url: string; target: string; features: string }> = []
  const window = {
    location: { origin: options.origin ?? 'http://page.example' },
    open(url: string, target: string, features: string) {
      opened.push({ url, target, features })
      return options.blocked ? null : popup
    },
    addEventListener: (_type: 'message', listener: (event: MessageEvent) => void) =>
      void listeners.add(listener),
    removeEventListener: (_type: 'message', listener: (event: MessageEvent) => void) =>
      void listeners.delete(listener),
  } satisfies PopupOpener
  const post = (data: unknown, from: { origin: string; source: Popup | object | null }) => {
    for (const listener of [...listeners]) listener({ data, ...from } as MessageEvent)
  }
  return { window, popup, opened, listeners, post }
}

/** A login answer's data, as the service's callback page posts it: a new account's, registered through the API. */
async function loginAnswer() {
  const answer = await fetch(`${service.baseUrl}/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(newCredentials()),
  })
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { data: Record<string, unknown> & { access_token: string } }).data
}

describe('loginWithProvider', () => {
  it('opens the popup at once, and logs in with the answer its callback page posts, as a login does', async () => {
    const storage = createSharedStorage()
    const onChange = vi.fn()
    const client = createTesseraClient({
      baseUrl: `${service.baseUrl}/`,
      storage,
      locks: createLockManager(),
    })
    client.onChange(onChange)
    const fake = fakeWindow()
    const data = await loginAnswer()
    const signingIn = client.loginWithProvider('google', { window: fake.window })
    // opened in the caller's task, before anything was awaited: a popup blocker lets only that through
    expect(fake.opened).toEqual([
      { url: `${service.baseUrl}/auth/oauth/google/start`, target: 'tessera-sign-in', features: 'popup' },
    ])
    expect(fake.listeners.size).toBe(1)
    fake.post(
      { type: RESULT, success: true, provider: 'google', message: 'Signed in', data },
      {
        origin: service.baseUrl,
        source: fake.popup,
      },
    )
    const account = await signingIn
    expect(account).toEqual(await client.me())
    expect(account).not.toHaveProperty('accessToken')
    expect(account).not.toHaveProperty('refreshToken')
    expect(client.getAccessToken()).toBe(data.access_token)
    expect(JSON.parse(storage.getItem('tessera.tokens') ?? '')).toEqual({
      accessToken: data.access_token,
      refreshToken: data.refresh_token,
    })
    await Promise.resolve()
    expect(onChange).toHaveBeenCalledWith(true)
    // the wait is over: no listener left behind, and the popup closed
    expect(fake.listeners.size).toBe(0)
    expect(fake.popup.closed).toBe(true)
  })

  it('takes only a message from the service origin, from its popup, of the result type', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const fake = fakeWindow()
    const data = await loginAnswer()
    const signingIn = client.loginWithProvider('google', { window: fake.window })
    const result = { type: RESULT, success: true, provider: 'google', message: 'Signed in', data }
    // another origin (a page of the provider's, say), even from the popup
    fake.post(result, { origin: 'https://accounts.example.com', source: fake.popup })
    // the service's origin, but another window of it (another tab, a frame)
    fake.post(result, { origin: service.baseUrl, source: {} })
    fake.post(result, { origin: service.baseUrl, source: null })
    // the popup, with other messages
    fake.post({ ...result, type: 'something:else' }, { origin: service.baseUrl, source: fake.popup })
    fake.post(null, { origin: service.baseUrl, source: fake.popup })
    fake.post('auth:oauth:result', { origin: service.baseUrl, source: fake.popup })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(client.isLoggedIn()).toBe(false)
    expect(fake.listeners.size).toBe(1)
    expect(fake.popup.closed).toBe(false)

    fake.post(result, { origin: service.baseUrl, source: fake.popup })
    expect(await signingIn).toMatchObject({ id: data.id })
    expect(client.isLoggedIn()).toBe(true)
  })

  it('with a relative baseUrl, the service is the page: its origin is the one that counts', async () => {
    const client = createTesseraClient({ baseUrl: '' })
    const fake = fakeWindow({ origin: service.baseUrl })
    const data = await loginAnswer()
    const signingIn = client.loginWithProvider('acme corp', { window: fake.window })
    expect(fake.opened[0]?.url).toBe('/auth/oauth/acme%20corp/start')
    const result = { type: RESULT, success: true, provider: 'acme corp', message: 'Signed in', data }
    fake.post(result, { origin: 'http://page.example', source: fake.popup })
    fake.post(result, { origin: service.baseUrl, source: fake.popup })
    expect(await signingIn).toMatchObject({ id: data.id })
  })

  it('a failure that the callback page reports is a TesseraError 401 with its message; nothing is stored', async () => {
    const storage = createSharedStorage()
    const client = createTesseraClient({ baseUrl: service.baseUrl, storage })
    const fake = fakeWindow()
    const signingIn = failure(client.loginWithProvider('google', { window: fake.window }))
    fake.post(
      { type: RESULT, success: false, provider: 'google', message: 'The sign-in was cancelled', data: null },
      { origin: service.baseUrl, source: fake.popup },
    )
    expect(await signingIn).toMatchObject({
      name: 'TesseraError',
      status: 401,
      message: 'The sign-in was cancelled',
      retryable: false,
    })
    expect(storage.items.size).toBe(0)
    expect(fake.listeners.size).toBe(0)
    expect(fake.popup.closed).toBe(true)
  })

  it("an account with a second factor: the popup's challenge (docs/api.md §4.25) is the result, and nothing is stored", async () => {
    const storage = createSharedStorage()
    const onChange = vi.fn()
    const client = createTesseraClient({ baseUrl: service.baseUrl, storage, locks: createLockManager() })
    client.onChange(onChange)
    // a session of this client already (a first sign-in, answered by a login): a challenge leaves it as it is
    const first = fakeWindow()
    const signingInFirst = client.loginWithProvider('google', { window: first.window })
    first.post(
      { type: RESULT, success: true, provider: 'google', message: 'Signed in', data: await loginAnswer() },
      { origin: service.baseUrl, source: first.popup },
    )
    await signingInFirst
    const pair = storage.getItem('tessera.tokens')
    expect(pair).not.toBeNull()
    onChange.mockClear()

    const fake = fakeWindow()
    const signingIn = client.loginWithProvider('google', { window: fake.window })
    const challenge = {
      mfa_required: true,
      mfa_ticket: 'T'.repeat(43),
      factors: ['totp', 'passkey', 'recovery_code'],
    }
    fake.post(
      { type: RESULT, success: true, provider: 'google', message: 'Second factor required', data: challenge },
      { origin: service.baseUrl, source: fake.popup },
    )
    expect(await signingIn).toEqual({
      mfaRequired: true,
      mfaTicket: 'T'.repeat(43),
      factors: ['totp', 'passkey', 'recovery_code'],
    })
    expect(storage.getItem('tessera.tokens')).toBe(pair)
    await Promise.resolve()
    expect(onChange).not.toHaveBeenCalled()
    expect(fake.popup.closed).toBe(true)
    expect(fake.listeners.size).toBe(0)
  })

  it('no answer in time is a TesseraError 0, and the popup is closed', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const fake = fakeWindow()
    const started = performance.now()
    const error = await failure(client.loginWithProvider('google', { window: fake.window, timeoutMs: 300 }))
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    expect(error).toMatchObject({ status: 0, message: 'The sign-in timed out', retryable: true })
    expect(fake.popup.closed).toBe(true)
    expect(fake.listeners.size).toBe(0)
    expect(client.isLoggedIn()).toBe(false)
  })

  it('a popup closed without an answer is a TesseraError 0 at once, not at the 120 s deadline; an answer just before closing counts', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const fake = fakeWindow()
    const signingIn = failure(client.loginWithProvider('google', { window: fake.window }))
    fake.popup.closed = true
    const started = performance.now()
    expect(await signingIn).toMatchObject({ status: 0, message: 'The sign-in window was closed' })
    // two polls half a second apart, not the deadline: the bound leaves a loaded machine room
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(fake.listeners.size).toBe(0)

    // the callback page closes itself right after posting: its answer may come after the popup is seen closed
    const again = fakeWindow()
    const data = await loginAnswer()
    const signingInAgain = client.loginWithProvider('google', { window: again.window })
    again.popup.closed = true
    await new Promise((resolve) => setTimeout(resolve, 600))
    again.post(
      { type: RESULT, success: true, provider: 'google', message: 'Signed in', data },
      { origin: service.baseUrl, source: again.popup },
    )
    expect(await signingInAgain).toMatchObject({ id: data.id })
  })

  it('a popup the browser blocked is a TesseraError 0 at once', async () => {
    const client = createTesseraClient({ baseUrl: service.baseUrl })
    const fake = fakeWindow({ blocked: true })
    expect(await failure(client.loginWithProvider('google', { window: fake.window }))).toMatchObject({
      status: 0,
      message: 'The popup was blocked',
    })
    expect(fake.listeners.size).toBe(0)
  })
})
