import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { emlMailbox, type Mailbox } from '../../test/support/mailbox.js'
import type { TestOidcProvider } from '../../test/support/oidc-provider.js'
import {
  type ServiceWithProvider,
  startServiceWithOidcProvider,
} from '../../test/support/provider-service.js'
import { useTempDir } from '../../test/support/temp-dir.js'
import { TestBrowser } from '../../test/support/test-browser.js'
import { createTesseraClient, type TesseraError } from '../src/index.js'
import { createSharedStorage, mailedCode, observedFetch } from './service.js'

// The provider calls against the service as a child process (the build in dist/: `npm run build` first), signing in
// at a real OpenID provider (oidc-provider over HTTPS on 127.0.0.1, trusted by the service through
// NODE_EXTRA_CA_CERTS) with the `google` preset pointed at it. The popup's logic is provider-popup.test.ts's; here, a
// sign-in with redirect_to, followed by a browser of redirects, gives the code that exchangeProviderCode takes.

const temp = useTempDir('client-providers')
let service: ServiceWithProvider<TestOidcProvider>
let mailbox: Mailbox

beforeAll(async () => {
  // without SMTP_URL, its mail is written to <DATA_DIR>/outbox/
  service = await startServiceWithOidcProvider(temp.path, { NODE_ENV: 'development' })
  mailbox = emlMailbox(temp.path)
})
afterAll(async () => {
  await service?.stop()
  await mailbox?.close()
})

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('should have failed'),
    (error: unknown) => error as TesseraError,
  )

let accounts = 0
/** A provider account of its own: a new subject and address, which the provider vouches for. */
function newProviderAccount() {
  const n = ++accounts
  const claims = { sub: `client-${process.pid}-${n}`, email: `provider-${process.pid}-${n}@example.com` }
  service.provider.setAccount({ ...claims, email_verified: true, name: `Grace ${n}` })
  return claims
}

/** A sign-in started with redirect_to (a page of the service's origin, FRONTEND_ORIGIN's default): its code. */
async function signInCode(): Promise<string> {
  const redirectTo = `${service.origin}/demo?from=provider`
  let back: URL | null = null
  await new TestBrowser({ ca: service.ca }).navigate(
    `${service.origin}/auth/oauth/google/start?redirect_to=${encodeURIComponent(redirectTo)}`,
    (next) => {
      if (next.origin !== service.origin || next.pathname !== '/demo') return false
      back = next
      return true
    },
  )
  const code = (back as URL | null)?.searchParams.get('code')
  if (!code) throw new Error('the sign-in did not come back with a code')
  return code
}

/** A client of the service whose every request is observed. */
function newClient() {
  const storage = createSharedStorage()
  const observed = observedFetch()
  const onChange = vi.fn()
  const client = createTesseraClient({ baseUrl: service.origin, storage, fetch: observed.send })
  client.onChange(onChange)
  /** What it has sent since the last call, as `METHOD /path`; forgotten once read. */
  const sent = () => observed.requests.splice(0).map((r) => `${r.method} ${r.path}`)
  return { client, storage, sent, onChange }
}

describe('the providers', () => {
  it('providers() lists the names the service signs in with, without a login', async () => {
    const { client, sent } = newClient()
    expect(await client.providers()).toEqual(['google'])
    expect(sent()).toEqual(['GET /auth/oauth/providers'])
  })

  it('exchangeProviderCode logs in with the code of a redirect_to sign-in, as login does; a used code is a 400', async () => {
    const { email } = newProviderAccount()
    const code = await signInCode()
    const { client, storage, sent, onChange } = newClient()
    const account = await client.exchangeProviderCode(code)
    expect(sent()).toEqual(['POST /auth/oauth/exchange'])
    expect(account).toEqual({
      id: expect.stringMatching(/^[1-9]\d{9}$/),
      email,
      emailVerified: true,
      username: null,
      nickname: expect.stringMatching(/^Grace \d+$/),
      avatarUrl: null,
      bio: null,
      role: 'user',
      status: 'active',
      passwordSet: false,
      providers: ['google'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(JSON.parse(storage.getItem('tessera.tokens') ?? 'null')).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    })
    expect(await client.me()).toEqual(account)
    expect(onChange).toHaveBeenCalledWith(true)
    sent()

    // good once: the same code again is refused, and the session in place stays as it is, with no refresh
    const token = client.getAccessToken()
    expect(await failure(client.exchangeProviderCode(code))).toMatchObject({
      status: 400,
      message: 'Invalid or expired code',
      retryable: false,
    })
    expect(sent()).toEqual(['POST /auth/oauth/exchange'])
    expect(client.getAccessToken()).toBe(token)
  })

  it('unlinkProvider refuses the only way in with a 409; with a password, it unlinks and answers the account', async () => {
    const { email } = newProviderAccount()
    const { client, sent } = newClient()
    await client.exchangeProviderCode(await signInCode())
    expect(await client.linkedProviders()).toEqual(['google'])
    expect(sent()).toEqual(['POST /auth/oauth/exchange', 'GET /auth/me'])

    expect(await failure(client.unlinkProvider('google'))).toMatchObject({
      status: 409,
      message: 'This is the only way to sign in to the account',
      retryable: false,
    })
    expect(sent()).toEqual(['DELETE /auth/oauth/google'])
    expect(await client.linkedProviders()).toEqual(['google'])

    // a password set with a mailed code: another way in
    await client.sendCode({ email, purpose: 'reset_password' })
    const account = await client.resetPassword(
      email,
      await mailedCode(mailbox, email),
      'a password of its own',
    )
    expect(account).toMatchObject({ passwordSet: true, providers: ['google'] })
    sent()

    const unlinked = await client.unlinkProvider('google')
    expect(sent()).toEqual(['DELETE /auth/oauth/google'])
    expect(unlinked).toEqual({ ...account, providers: [], updatedAt: expect.any(String) })
    expect(await client.linkedProviders()).toEqual([])
    expect(await failure(client.unlinkProvider('google'))).toMatchObject({
      status: 404,
      message: 'This provider is not linked to the account',
    })
  })
})
