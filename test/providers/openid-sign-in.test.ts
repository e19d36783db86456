import { randomUUID } from 'node:crypto'
import { authenticator } from 'otplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/http.js'
import { type Mailbox, smtpMailbox } from '../support/mailbox.js'
import type { TestOidcProvider } from '../support/oidc-provider.js'
import { runCli } from '../support/process.js'
import { type ServiceWithProvider, startServiceWithOidcProvider } from '../support/provider-service.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import { useTempDir } from '../support/temp-dir.js'
import { TestBrowser } from '../support/test-browser.js'
import {
  api,
  callbackUrlOf,
  EMAIL_UNVERIFIED,
  expectFailed,
  expectInertPage,
  expectSignedIn,
  FAILED,
  pageResult,
  pkcePair,
  popupSignIn,
  STATE_INVALID,
} from './provider-harness.js'

// docs/api.md §4.24 against a real OpenID provider (oidc-provider over HTTPS on 127.0.0.1, its certificate trusted by
// the service through NODE_EXTRA_CA_CERTS) and the service as a child process, the `google` preset pointed at it

/** The application of `redirect_to`: another origin than the service's, which the browser never reaches here. */
const APP_ORIGIN = 'http://app.tessera.test'

describe('sign-in with an OpenID provider', () => {
  const temp = useTempDir('oidc-sign-in')
  let smtp: TestSmtpServer
  let mailbox: Mailbox
  let service: ServiceWithProvider<TestOidcProvider>

  /** A fresh browser that trusts the provider's certificate. */
  const browser = () => new TestBrowser({ ca: service.ca })
  /** A provider account with a fresh subject. */
  let subjects = 0
  const subject = () => `oidc-subject-${++subjects}`

  /** A verified account with a password: registered with a code mailed to its address. */
  const verifiedAccount = async (email = uniqueEmail()) => {
    expect(
      (await api(service, 'POST', '/auth/email/send-code', { body: { email, purpose: 'register' } })).status,
    ).toBe(200)
    const code = /\b(\d{6})\b/.exec((await mailbox.next(email)).text)?.[1]
    const registered = await api(service, 'POST', '/auth/register', {
      body: { email, password: PASSWORD, verification_code: code },
    })
    expect(registered.status).toBe(200)
    expect(registered.body.data.email_verified).toBe(true)
    return registered.body.data as Record<string, any>
  }

  beforeAll(async () => {
    smtp = await startSmtpServer()
    mailbox = smtpMailbox(smtp)
    service = await startServiceWithOidcProvider(temp.path, { SMTP_URL: smtp.url })
  })
  afterAll(async () => {
    await service?.stop()
    await mailbox?.close()
    await smtp?.stop()
  })

  it('lists the configured providers', async () => {
    expect(await api(service, 'GET', '/auth/oauth/providers')).toEqual({
      status: 200,
      body: { code: 200, message: 'Success', data: { providers: ['google'] } },
    })
  })

  it('answers an unknown provider at once with a page that posts the failure to the opener', async () => {
    const page = await browser().fetch(`${service.url}/auth/oauth/wechat/start`)
    expect(page.status).toBe(404)
    expectInertPage(page)
    expect(page.headers['set-cookie']).toBeUndefined()
    const result = pageResult(page.text)
    expect(result.targetOrigin).toBe(service.origin)
    expectFailed(result, 'wechat', 'This sign-in provider is not available')
  })

  it('sets a state cookie tied to the sign-in routes: HttpOnly, SameSite=Lax, ten minutes', async () => {
    const start = await browser().fetch(`${service.url}/auth/oauth/google/start`)
    expect(start.status).toBe(302)
    const location = new URL(String(start.headers.location))
    expect(location.origin).toBe(service.provider.issuer)
    expect(location.searchParams.get('code_challenge_method')).toBe('S256')
    expect(location.searchParams.get('scope')).toBe('openid email profile')
    expect(location.searchParams.get('redirect_uri')).toBe(`${service.origin}/auth/oauth/google/callback`)
    const state = location.searchParams.get('state')
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // PUBLIC_URL is http here: no Secure
    expect(start.headers['set-cookie']).toEqual([
      `tessera_oauth=${state}; Path=/auth/oauth/; HttpOnly; SameSite=Lax; Max-Age=600`,
    ])
  })

  it('creates an account in a popup sign-in, then signs the same provider account in to it again', async () => {
    const email = uniqueEmail()
    const sub = subject()
    service.provider.setAccount({
      sub,
      email: email.toUpperCase(),
      email_verified: true,
      name: '  Ada Lovelace  ',
      picture: 'https://127.0.0.1:1/picture.png',
    })
    const first = await popupSignIn(browser(), service, 'google')
    const account = expectSignedIn(first.result, 'google', service.origin)
    expect(account).toMatchObject({
      email,
      email_verified: true,
      nickname: 'Ada Lovelace',
      password_set: false,
      providers: ['google'],
      status: 'active',
    })
    expect((await api(service, 'GET', '/auth/me', { token: account.access_token })).body.data.id).toBe(
      account.id,
    )
    // the page's cookie is spent
    expect(first.page.headers['set-cookie']).toEqual([
      'tessera_oauth=; Path=/auth/oauth/; HttpOnly; SameSite=Lax; Max-Age=0',
    ])

    // another browser, the same provider account: the same account, whatever address the provider now gives
    service.provider.setAccount({ sub, email: uniqueEmail(), email_verified: true })
    const again = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    expect(again).toMatchObject({ id: account.id, email, providers: ['google'] })
    // its password login is the 401 of a wrong password: it has none
    const login = await api(service, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    expect(login).toEqual({
      status: 401,
      body: { code: 401, message: 'E-mail or password wrong', data: null },
    })
  })

  it('R4.25.6 an account with a second factor: the popup posts success, "Second factor required" and the challenge', async () => {
    const account = await verifiedAccount()
    const token = account.access_token
    const setup = await api(service, 'POST', '/auth/mfa/totp/setup', { token, body: { password: PASSWORD } })
    expect(setup.status).toBe(200)
    // the app's code by otplib, not the service's own implementation
    const code = authenticator.generate(setup.body.data.secret)
    const confirmed = await api(service, 'POST', '/auth/mfa/totp/confirm', {
      token,
      body: { factor_id: setup.body.data.factor_id, code },
    })
    expect(confirmed.status).toBe(200)
    service.provider.setAccount({ sub: subject(), email: account.email, email_verified: true })
    const { result } = await popupSignIn(browser(), service, 'google')
    expect(result.targetOrigin).toBe(service.origin)
    expect(result.message).toEqual({
      type: 'auth:oauth:result',
      success: true,
      provider: 'google',
      message: 'Second factor required',
      data: {
        mfa_required: true,
        mfa_ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        factors: ['totp', 'recovery_code'],
      },
    })
    // the link is made; the sign-in completes with the second step (a recovery code: the code's step is used)
    const verified = await api(service, 'POST', '/auth/mfa/verify', {
      body: {
        mfa_ticket: result.message.data?.mfa_ticket,
        recovery_code: confirmed.body.data.recovery_codes[0],
      },
    })
    expect(verified.status).toBe(200)
    expect(verified.body.data).toMatchObject({ id: account.id, providers: ['google'] })
  })

  it('links the account whose verified address the provider vouches for, and tells its owner', async () => {
    const owner = await verifiedAccount()
    service.provider.setAccount({
      sub: subject(),
      email: owner.email,
      email_verified: true,
      name: 'Someone Else',
    })
    const data = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    // the account as it was, with the provider: its password and profile stay
    expect(data).toMatchObject({
      id: owner.id,
      email: owner.email,
      email_verified: true,
      password_set: true,
      nickname: null,
      providers: ['google'],
    })
    const notice = await mailbox.next(owner.email)
    expect(notice.subject).toBe('A sign-in provider was linked to your Tessera account')
    expect(notice.text).toContain('google')
    expect(
      (await api(service, 'POST', '/auth/login', { body: { email: owner.email, password: PASSWORD } }))
        .status,
    ).toBe(200)
  })

  it("takes over an unverified account whose address the provider vouches for: the impostor's password and sessions end", async () => {
    const email = uniqueEmail()
    const impostor = await api(service, 'POST', '/auth/register', { body: { email, password: PASSWORD } })
    expect(impostor.body.data.email_verified).toBe(false)
    service.provider.setAccount({ sub: subject(), email, email_verified: true })
    const data = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    expect(data).toMatchObject({
      id: impostor.body.data.id,
      email_verified: true,
      password_set: false,
      providers: ['google'],
    })
    expect((await api(service, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).status).toBe(
      401,
    )
    const refresh = await api(service, 'POST', '/auth/refresh', {
      body: { refresh_token: impostor.body.data.refresh_token },
    })
    expect(refresh.status).toBe(401)
  })

  it('never links by an address the provider does not vouch for', async () => {
    const owner = await verifiedAccount()
    const unverifiedOwner = await api(service, 'POST', '/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD },
    })
    for (const email of [owner.email, unverifiedOwner.body.data.email]) {
      service.provider.setAccount({ sub: subject(), email, email_verified: false })
      const { result } = await popupSignIn(browser(), service, 'google')
      expectFailed(result, 'google', EMAIL_UNVERIFIED)
      const login = await api(service, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
      expect(login.status).toBe(200)
      expect(login.body.data.providers).toEqual([])
    }
    // a claim that is not exactly `true` is not one
    service.provider.setAccount({
      sub: subject(),
      email: owner.email,
      email_verified: 'true' as unknown as boolean,
    })
    expectFailed((await popupSignIn(browser(), service, 'google')).result, 'google', EMAIL_UNVERIFIED)
  })

  it('refuses a state used once already: the sign-in is used up', async () => {
    service.provider.setAccount({ sub: subject(), email: uniqueEmail(), email_verified: true })
    const person = browser()
    const callback = await callbackUrlOf(person, service, 'google')
    const state = String(callback.searchParams.get('state'))
    const first = await person.fetch(callback.href)
    expectSignedIn(pageResult(first.text), 'google', service.origin)
    // the same answer again, with the cookie the browser no longer has put back
    person.setCookie(service.origin, 'tessera_oauth', state, '/auth/oauth/')
    const replayed = await person.fetch(callback.href)
    expect(replayed.status).toBe(200)
    expectInertPage(replayed)
    expectFailed(pageResult(replayed.text), 'google', STATE_INVALID)
  })

  it("refuses a callback in a second browser, whose cookie is another sign-in's; the first browser's still works", async () => {
    service.provider.setAccount({ sub: subject(), email: uniqueEmail(), email_verified: true })
    const victim = browser()
    const callback = await callbackUrlOf(victim, service, 'google')
    const other = browser()
    await other.fetch(`${service.url}/auth/oauth/google/start`)
    expect(other.cookie(service.origin, 'tessera_oauth')).toEqual(expect.any(String))
    expectFailed(pageResult((await other.fetch(callback.href)).text), 'google', STATE_INVALID)
    // and with no cookie at all
    expectFailed(pageResult((await browser().fetch(callback.href)).text), 'google', STATE_INVALID)
    // the refusals did not use the sign-in up
    expectSignedIn(pageResult((await victim.fetch(callback.href)).text), 'google', service.origin)
  })

  it("keeps the page inert with a provider's error_description that tries to end the script", async () => {
    const forged = '</script><script>alert(document.domain)</script><!--'
    service.provider.setRefusal({ error: 'access_denied', error_description: forged })
    try {
      const page = await browser().navigate(`${service.url}/auth/oauth/google/start`)
      expect(page.status).toBe(200)
      expectInertPage(page)
      expect(page.text).not.toContain('alert(')
      expect(page.text).not.toContain('</script><script>')
      expectFailed(pageResult(page.text), 'google', 'The sign-in was cancelled')
    } finally {
      service.provider.setRefusal(null)
    }
    // forged straight into the callback's URL, in every parameter
    const person = browser()
    const start = await person.fetch(`${service.url}/auth/oauth/google/start`)
    const state = new URL(String(start.headers.location)).searchParams.get('state') ?? ''
    const query = new URLSearchParams({ state, error: forged, error_description: forged, code: forged })
    const page = await person.fetch(`${service.url}/auth/oauth/google/callback?${query}`)
    expectInertPage(page)
    expect(page.text).not.toContain('alert(')
    expectFailed(pageResult(page.text), 'google', FAILED)
  })

  it('refuses redirect_to of another origin with a 400 page', async () => {
    for (const redirectTo of [
      'https://evil.example/steal',
      `${APP_ORIGIN}.evil.example/`,
      `//evil.example/`,
      'javascript:alert(1)',
    ]) {
      const page = await browser().fetch(
        `${service.url}/auth/oauth/google/start?redirect_to=${encodeURIComponent(redirectTo)}`,
      )
      expect(page.status, redirectTo).toBe(400)
      expectInertPage(page)
      expectFailed(pageResult(page.text), 'google', 'redirect_to must be an address of the application')
      expect(page.headers['set-cookie']).toBeUndefined()
    }
  })

  it('refuses a disabled account its provider sign-in', async () => {
    const sub = subject()
    service.provider.setAccount({ sub, email: uniqueEmail(), email_verified: true })
    const account = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    const disabled = await runCli(['users', 'disable', account.id], {
      DATABASE_URL: service.databaseUrl,
      DATA_DIR: temp.path,
    })
    expect(disabled.code, disabled.stderr).toBe(0)
    expectFailed((await popupSignIn(browser(), service, 'google')).result, 'google', FAILED)
  })

  it('unlinks a provider from an account that has a password, and refuses to unlink the only way in', async () => {
    service.provider.setAccount({ sub: subject(), email: uniqueEmail(), email_verified: true })
    const onlyProvider = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    const refused = await api(service, 'DELETE', '/auth/oauth/google', { token: onlyProvider.access_token })
    expect(refused).toEqual({
      status: 409,
      body: { code: 409, message: 'This is the only way to sign in to the account', data: null },
    })

    const owner = await verifiedAccount()
    service.provider.setAccount({ sub: subject(), email: owner.email, email_verified: true })
    const linked = expectSignedIn(
      (await popupSignIn(browser(), service, 'google')).result,
      'google',
      service.origin,
    )
    await mailbox.next(owner.email)
    const unlinked = await api(service, 'DELETE', '/auth/oauth/google', { token: linked.access_token })
    expect(unlinked.status).toBe(200)
    expect(unlinked.body.data).toMatchObject({ id: owner.id, providers: [], password_set: true })
    expect(await api(service, 'DELETE', '/auth/oauth/google', { token: linked.access_token })).toEqual({
      status: 404,
      body: { code: 404, message: 'This provider is not linked to the account', data: null },
    })
  })
})

describe('sign-in with an OpenID provider, back to the application with redirect_to', () => {
  const temp = useTempDir('oidc-redirect')
  let smtp: TestSmtpServer
  let mailbox: Mailbox
  let service: ServiceWithProvider<TestOidcProvider>

  beforeAll(async () => {
    smtp = await startSmtpServer()
    mailbox = smtpMailbox(smtp)
    // the claims kept to the UserInfo endpoint, as OpenID Connect's default rule has it
    service = await startServiceWithOidcProvider(
      temp.path,
      { FRONTEND_ORIGIN: APP_ORIGIN, SMTP_URL: smtp.url },
      { claimsInIdToken: false },
    )
  })
  afterAll(async () => {
    await service?.stop()
    await mailbox?.close()
    await smtp?.stop()
  })

  /**
   * Follows a redirect_to sign-in, started with `challenge` (a fresh one by default), to the application's URL (not
   * requested), and returns it.
   */
  const returnUrl = async (redirectTo: string, challenge = pkcePair().challenge): Promise<URL> => {
    let back: URL | null = null
    const query = new URLSearchParams({ redirect_to: redirectTo, code_challenge: challenge })
    await new TestBrowser({ ca: service.ca }).navigate(
      `${service.url}/auth/oauth/google/start?${query}`,
      (next) => {
        if (next.origin !== APP_ORIGIN) return false
        back = next
        return true
      },
    )
    if (back === null) throw new Error('the sign-in did not return to the application')
    return back
  }
  /** A redirect_to sign-in of a new provider account, started with `challenge`: the code it came back with. */
  /** A redirect_to sign-in of the provider account as set, started with `challenge`: the code it came back with. */
  const codeFor = async (challenge: string): Promise<string> => {
    const code = (await returnUrl(`${APP_ORIGIN}/signed-in`, challenge)).searchParams.get('code')
    if (code === null) throw new Error('no code')
    return code
  }
  const signInCode = (challenge: string): Promise<string> => {
    service.provider.setAccount({
      sub: `redirect-${randomUUID()}`,
      email: uniqueEmail(),
      email_verified: true,
    })
    return codeFor(challenge)
  }
  const exchange = (body: Record<string, unknown>) => api(service, 'POST', '/auth/oauth/exchange', { body })
  const REFUSED = { status: 400, body: { code: 400, message: 'Invalid or expired code', data: null } }

  it('returns with a one-time code, which the exchange with the verifier turns into a login answer once', async () => {
    const email = uniqueEmail()
    service.provider.setAccount({ sub: 'redirect-subject-1', email, email_verified: true, name: 'Grace' })
    const { verifier, challenge } = pkcePair()
    const back = await returnUrl(`${APP_ORIGIN}/signed-in?tab=profile`, challenge)
    expect(back.pathname).toBe('/signed-in')
    expect(back.searchParams.get('tab')).toBe('profile')
    const code = back.searchParams.get('code')
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(back.searchParams.has('access_token')).toBe(false)
    expect(back.searchParams.has('code_challenge')).toBe(false)
    const exchanged = await exchange({ code, code_verifier: verifier })
    expect(exchanged.status).toBe(200)
    expect(exchanged.body.data).toMatchObject({
      email,
      email_verified: true,
      nickname: 'Grace',
      providers: ['google'],
      password_set: false,
    })
    expect((await api(service, 'GET', '/auth/me', { token: exchanged.body.data.access_token })).status).toBe(
      200,
    )
    expect(await exchange({ code, code_verifier: verifier })).toEqual(REFUSED)
    const unknown = await exchange({ code: 'x'.repeat(43), code_verifier: verifier })
    expect(unknown).toEqual(REFUSED)
  })

  it('R4.25.6 the exchange for an account with a second factor answers the challenge, with no tokens', async () => {
    const email = uniqueEmail()
    const sub = `redirect-mfa-${randomUUID()}`
    service.provider.setAccount({ sub, email, email_verified: true })
    const first = pkcePair()
    const created = await exchange({ code: await codeFor(first.challenge), code_verifier: first.verifier })
    expect(created.status).toBe(200)
    const token = created.body.data.access_token
    // an account without a password enrols with a manage_factors code mailed to its address
    expect(
      (await api(service, 'POST', '/auth/me/send-code', { token, body: { purpose: 'manage_factors' } }))
        .status,
    ).toBe(200)
    const mailed = /\b(\d{6})\b/.exec((await mailbox.next(email)).text)?.[1]
    const setup = await api(service, 'POST', '/auth/mfa/totp/setup', {
      token,
      body: { verification_code: mailed },
    })
    expect(setup.status).toBe(200)
    const confirmed = await api(service, 'POST', '/auth/mfa/totp/confirm', {
      token,
      body: { factor_id: setup.body.data.factor_id, code: authenticator.generate(setup.body.data.secret) },
    })
    expect(confirmed.status).toBe(200)
    // the same provider account signs in again: the exchange is a first factor alone
    const second = pkcePair()
    const challenged = await exchange({
      code: await codeFor(second.challenge),
      code_verifier: second.verifier,
    })
    expect(challenged).toEqual({
      status: 200,
      body: {
        code: 200,
        message: 'Success',
        data: {
          mfa_required: true,
          mfa_ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          factors: ['totp', 'recovery_code'],
        },
      },
    })
    const verified = await api(service, 'POST', '/auth/mfa/verify', {
      body: {
        mfa_ticket: challenged.body.data.mfa_ticket,
        recovery_code: confirmed.body.data.recovery_codes[0],
      },
    })
    expect(verified.status).toBe(200)
    expect(verified.body.data).toMatchObject({ id: created.body.data.id, providers: ['google'] })
    expect(typeof verified.body.data.access_token).toBe('string')
  })

  it('R4.24.11 refuses redirect_to without a code_challenge, or with one not of the S256 form, with a 400 page', async () => {
    const challengeRefused = 'code_challenge must be the S256 challenge of a PKCE verifier'
    const redirectTo = `${APP_ORIGIN}/signed-in`
    const { verifier, challenge } = pkcePair()
    const queries: Array<Record<string, string>> = [
      { redirect_to: redirectTo },
      { redirect_to: redirectTo, code_challenge: '' },
      // the verifier itself (the `plain` method), which S256 is not
      { redirect_to: redirectTo, code_challenge: `${verifier}~` },
      { redirect_to: redirectTo, code_challenge: `${challenge}=` },
      { redirect_to: redirectTo, code_challenge: challenge.replace(/^./, '+') },
      { redirect_to: redirectTo, code_challenge: challenge.slice(1) },
    ]
    for (const query of queries) {
      const page = await new TestBrowser({ ca: service.ca }).fetch(
        `${service.url}/auth/oauth/google/start?${new URLSearchParams(query)}`,
      )
      expect(page.status, JSON.stringify(query)).toBe(400)
      expectInertPage(page)
      expectFailed(pageResult(page.text), 'google', challengeRefused)
      expect(page.headers['set-cookie']).toBeUndefined()
    }
    // given twice: no challenge of one sign-in
    const twice = await new TestBrowser({ ca: service.ca }).fetch(
      `${service.url}/auth/oauth/google/start?${new URLSearchParams([
        ['redirect_to', redirectTo],
        ['code_challenge', challenge],
        ['code_challenge', challenge],
      ])}`,
    )
    expect(twice.status).toBe(400)
    expectFailed(pageResult(twice.text), 'google', challengeRefused)
    // the popup has no use for one
    const popup = await new TestBrowser({ ca: service.ca }).fetch(
      `${service.url}/auth/oauth/google/start?code_challenge=${challenge}`,
    )
    expect(popup.status).toBe(302)
  })

  it('R4.24.14 refuses an exchange without the verifier or with a wrong one as an unknown code, and uses the code up', async () => {
    const { verifier, challenge } = pkcePair()
    const other = pkcePair().verifier
    for (const wrong of [
      {},
      { code_verifier: other },
      { code_verifier: '' },
      // the challenge in place of its verifier, and a verifier one character off
      { code_verifier: challenge },
      { code_verifier: `${verifier}a` },
      { code_verifier: verifier.toUpperCase() },
    ]) {
      const code = await signInCode(challenge)
      expect(await exchange({ code, ...wrong }), JSON.stringify(wrong)).toEqual(REFUSED)
      // used up: the right verifier comes too late
      expect(await exchange({ code, code_verifier: verifier }), JSON.stringify(wrong)).toEqual(REFUSED)
    }
  })

  it("R4.24.14 refuses an attacker's code to another person's application, whose verifier is its own (login CSRF)", async () => {
    // the attacker signs in with their own provider account and stops at the redirect back, keeping the code
    const attacker = pkcePair()
    const attackerEmail = uniqueEmail()
    service.provider.setAccount({
      sub: `attacker-${randomUUID()}`,
      email: attackerEmail,
      email_verified: true,
    })
    const code = (await returnUrl(`${APP_ORIGIN}/signed-in`, attacker.challenge)).searchParams.get('code')
    // the victim follows the attacker's link to the application, which is in the middle of a sign-in of its own
    // with another verifier, and exchanges the code it finds in its URL
    const victim = pkcePair()
    expect(await exchange({ code, code_verifier: victim.verifier })).toEqual(REFUSED)
    // and the code is spent: the attacker cannot hand it on again, even with the right verifier
    expect(await exchange({ code, code_verifier: attacker.verifier })).toEqual(REFUSED)
    // the victim's own sign-in is not disturbed
    const own = await signInCode(victim.challenge)
    const signedIn = await exchange({ code: own, code_verifier: victim.verifier })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.data.email).not.toBe(attackerEmail)
  })

  it('returns a failure as an error parameter, and the page posts only to FRONTEND_ORIGIN', async () => {
    service.provider.setRefusal({ error: 'access_denied', error_description: '</script>' })
    try {
      const back = await returnUrl(`${APP_ORIGIN}/signed-in`)
      expect(back.searchParams.get('error')).toBe('cancelled')
      expect(back.searchParams.has('code')).toBe(false)
    } finally {
      service.provider.setRefusal(null)
    }
    service.provider.setAccount({ sub: 'redirect-subject-2', email: uniqueEmail(), email_verified: true })
    const { result } = await popupSignIn(new TestBrowser({ ca: service.ca }), service, 'google')
    expectSignedIn(result, 'google', APP_ORIGIN)
  })
})
