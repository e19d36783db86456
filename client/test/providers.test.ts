import { createHash, randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { emlMailbox, type Mailbox } from '../../test/support/mailbox.js'
import type { TestOidcProvider } from '../../test/support/oidc-provider.js'
import {
  type ServiceWithProvider,
  startServiceWithOidcProvider,
} from '../../test/support/provider-service.js'
import { useTempDir } from '../../test/support/temp-dir.js'
import { TestBrowser } from '../../test/support/test-browser.js'
import { createTesseraClient, type TesseraClient, type TesseraError } from '../src/index.js'
import { createSharedStorage, mailedCode, observedFetch } from './service.js'

// The provider calls against the service as a child process (the build in dist/: `npm run build` first), signing in
// at a real OpenID provider (oidc-provider over HTTPS on 127.0.0.1, trusted by the service through
// NODE_EXTRA_CA_CERTS) with the `google` preset pointed at it. The popup's logic is provider-popup.test.ts's; here, a
// sign-in without a popup (providerRedirectUrl), followed by a browser of redirects, gives the code that
// exchangeProviderCode takes.

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

/**
 * The browser's part of a sign-in without a popup, from the start URL that `providerRedirectUrl` made: the provider
 * (login and consent finished at once), the callback, and the code it brings back to the application's page (the
 * demo's, a page of FRONTEND_ORIGIN, the service's origin by default).
 */
async function codeFrom(startUrl: string): Promise<string> {
  let back: URL | null = null
  await new TestBrowser({ ca: service.ca }).navigate(startUrl, (next) => {
    if (next.origin !== service.origin || next.pathname !== '/demo') return false
    back = next
    return true
  })
  const code = (back as URL | null)?.searchParams.get('code')
  if (!code) throw new Error('the sign-in did not come back with a code')
  return code
}

/** Where a sign-in without a popup comes back to. */
const REDIRECT_TO = () => `${service.origin}/demo?from=provider`

/** A sign-in without a popup started by `client` (its verifier kept for it), followed to the code it comes back with. */
async function signInCode(client: TesseraClient): Promise<string> {
  return codeFrom(await client.providerRedirectUrl('google', REDIRECT_TO()))
}

/** The tab's sessionStorage, which Node 20 does not have: each call stands for a new tab. */
function newTab() {
  const sessionStorage = createSharedStorage()
  vi.stubGlobal('sessionStorage', sessionStorage)
  return sessionStorage
}
afterEach(() => {
  vi.unstubAllGlobals()
})

/** A client of the service whose every request is observed. */
function newClient() {
  const storage = createSharedStorage()
  const observed = observedFetch()
  const onChange = vi.fn()
  const client = createTesseraClient({ baseUrl: service.origin, storage, fetch: observed.send })
  client.onChange(onChange)
  /** What it has sent since the last call, as `METHOD /path`; forgotten once read. */
  const sent = () => observed.requests.splice(0).map((r) => `${r.method} ${r.path}`)
  /** The same, with each JSON body parsed. */
  const requests = () =>
    observed.requests
      .splice(0)
      .map((r) => ({ method: r.method, path: r.path, body: r.body === '' ? undefined : JSON.parse(r.body) }))
  return { client, storage, sent, requests, onChange }
}

describe('the providers', () => {
  it('providers() lists the names the service signs in with, without a login', async () => {
    const { client, sent } = newClient()
    expect(await client.providers()).toEqual(['google'])
    expect(sent()).toEqual(['GET /auth/oauth/providers'])
  })

  it("providerRedirectUrl makes a PKCE verifier, keeps it in the tab's sessionStorage, and answers the start with its S256 challenge", async () => {
    const tab = newTab()
    const { client, sent } = newClient()
    const url = new URL(await client.providerRedirectUrl('google', `${REDIRECT_TO()}&x=a b`))
    expect(sent()).toEqual([])
    expect(`${url.origin}${url.pathname}`).toBe(`${service.origin}/auth/oauth/google/start`)
    expect([...url.searchParams.keys()]).toEqual(['redirect_to', 'code_challenge'])
    expect(url.searchParams.get('redirect_to')).toBe(`${REDIRECT_TO()}&x=a b`)
    const verifier = tab.getItem('tessera.tokens.pkce') ?? ''
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier)))
    expect(url.searchParams.get('code_challenge')).toBe(
      createHash('sha256').update(verifier).digest('base64url'),
    )
    // a verifier of its own for each sign-in
    await client.providerRedirectUrl('google', REDIRECT_TO())
    expect(tab.getItem('tessera.tokens.pkce')).not.toBe(verifier)
  })

  it('exchangeProviderCode logs in with the code, and the verifier kept across the redirect, as login does; a used code is a 400', async () => {
    const tab = newTab()
    const { email } = newProviderAccount()
    // the page that starts the sign-in, and the page it comes back to: two clients of one tab
    const code = await signInCode(newClient().client)
    const verifier = tab.getItem('tessera.tokens.pkce')
    const { client, storage, sent, onChange, requests } = newClient()
    const account = await client.exchangeProviderCode(code)
    expect(requests()).toEqual([
      { method: 'POST', path: '/auth/oauth/exchange', body: { code, code_verifier: verifier } },
    ])
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
    // the verifier has served its one sign-in
    expect(tab.getItem('tessera.tokens.pkce')).toBeNull()
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

  it("refuses a code of a sign-in this tab did not start (an attacker's link), and the code is used up", async () => {
    // the attacker signs in with their own provider account, with a verifier of their own, and stops at the redirect
    newProviderAccount()
    const attacker = () => {
      const verifier = randomBytes(32).toString('base64url')
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      const query = new URLSearchParams({ redirect_to: REDIRECT_TO(), code_challenge: challenge })
      return { verifier, url: `${service.origin}/auth/oauth/google/start?${query}` }
    }
    // the victim's tab follows the link to the application, in the middle of a sign-in of its own (another
    // verifier) or in none, and the application exchanges the code it finds in its address
    for (const started of [true, false]) {
      const { verifier, url } = attacker()
      const code = await codeFrom(url)
      newTab()
      const victim = newClient()
      if (started) await victim.client.providerRedirectUrl('google', REDIRECT_TO())
      expect(await failure(victim.client.exchangeProviderCode(code))).toMatchObject({
        status: 400,
        message: 'Invalid or expired code',
      })
      expect(victim.client.isLoggedIn()).toBe(false)
      expect(victim.requests()).toEqual([
        {
          method: 'POST',
          path: '/auth/oauth/exchange',
          body: started ? { code, code_verifier: expect.any(String) } : { code },
        },
      ])
      // the refused code is spent: not even the attacker's verifier redeems it now
      const replay = await fetch(`${service.origin}/auth/oauth/exchange`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code, code_verifier: verifier }),
      })
      expect(replay.status).toBe(400)
    }
  })

  it("keeps the verifier in the client's memory where there is no sessionStorage (Node)", async () => {
    newProviderAccount()
    const { client } = newClient()
    expect(await client.exchangeProviderCode(await signInCode(client))).toMatchObject({
      providers: ['google'],
    })
  })

  it('unlinkProvider refuses the only way in with a 409; with a password, it unlinks and answers the account', async () => {
    const { email } = newProviderAccount()
    const { client, sent } = newClient()
    await client.exchangeProviderCode(await signInCode(client))
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
