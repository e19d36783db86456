import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authenticator } from 'otplib'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { codeIn, emlMailbox, type Mailbox } from '../support/mailbox.js'
import { freePort } from '../support/redis-server.js'
import { startTestService, type TestService } from '../support/test-service.js'

// The demo page's second factor in Chromium, against the real service: an authenticator app enrolled from its QR
// code and signed in with (its codes computed by otplib, another implementation of RFC 6238 than the service's), a
// recovery code, and a passkey registered through the client library with Chromium's virtual authenticator (the
// DevTools protocol's WebAuthn domain) and signed in with, without an address. The page is served from `localhost`:
// a secure context, and a host name that WebAuthn takes as the relying party (an IP address is none).

const available = chromiumAvailable('the browser tests of the second factor on /demo')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), 'tessera-demo-screenshots')
const PASSWORD = 'correct horse battery'
/** The client's storage item (createTesseraClient's default storageKey), read in the page. */
const STORED_PAIR = "localStorage.getItem('tessera.tokens')"

/** The authenticator app's code for `secret`, `offsetSteps` time steps (30 s) from now. */
const appCode = (secret: string, offsetSteps = 0) =>
  authenticator.clone({ epoch: Date.now() + offsetSteps * 30_000 }).generate(secret)

describe.skipIf(!available)('the demo page with a second factor and passkeys', () => {
  let service: TestService
  /** `http://localhost:<port>`: the service's PUBLIC_URL (so its relying party, `localhost`) and the page's origin. */
  let origin: string
  let mailbox: Mailbox
  let browser: Browser
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of the page. */
  let problems: string[]
  let accounts = 0

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    const port = await freePort()
    origin = `http://localhost:${port}`
    // development without SMTP_URL: the service writes each message to <DATA_DIR>/outbox/, which `mailbox` reads
    service = await startTestService(backends[0]!, { env: { NODE_ENV: 'development', PUBLIC_URL: origin } })
    await service.app.listen({ host: '127.0.0.1', port })
    mailbox = emlMailbox(service.config.storage.dataDir)
    // localhost is the loopback address the service listens on
    browser = await launchChromium(['--host-resolver-rules=MAP localhost 127.0.0.1'])
  })
  afterAll(async () => {
    await browser?.close()
    await service?.close()
    await mailbox?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  /**
   * A fresh profile with the demo page open in it, and a virtual authenticator of the kind a phone or a laptop has
   * built in (CTAP2, internal, discoverable credentials, user verification that succeeds), through the DevTools
   * protocol: the page's WebAuthn ceremonies talk to it as they would to a real one.
   */
  async function openDemo(): Promise<{ page: Page; webAuthn: CDPSession; authenticatorId: string }> {
    problems = []
    context = await browser.newContext({ viewport: { width: 1200, height: 1000 }, locale: 'en-GB' })
    await context.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))",
    )
    const page = await context.newPage()
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      // Chromium reports every 4xx answer to fetch on the console; the page shows them itself
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text())
    })
    const webAuthn = await context.newCDPSession(page)
    await webAuthn.send('WebAuthn.enable')
    const { authenticatorId } = await webAuthn.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    })
    await page.goto(`${origin}/demo`)
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    await idle(page)
    return { page, webAuthn, authenticatorId }
  }

  /** Waits until the page's action has finished (its buttons are enabled again). */
  const idle = (page: Page) => page.locator('body[aria-busy="false"]').waitFor()
  const text = (page: Page, selector: string) => page.locator(selector).innerText()

  /** The request lines the service has logged since `mark` (a count of log lines). */
  function requestsSince(mark: number) {
    return service.logLines
      .slice(mark)
      .map((line) => JSON.parse(line) as { msg: string; method: string; path: string; statusCode: number })
      .filter((record) => record.msg === 'request')
      .map((record) => `${record.method} ${record.path} ${record.statusCode}`)
  }

  /** The code of the next mail to `address` that carries one. */
  async function mailedCode(address: string) {
    for (;;) {
      const code = codeIn(await mailbox.next(address))
      if (code !== null) return code
    }
  }

  async function click(page: Page, selector: string) {
    await page.click(selector)
    await idle(page)
  }

  async function logIn(page: Page, email: string) {
    await page.click('#mode-login')
    await page.fill('#email', email)
    await page.fill('#password', PASSWORD)
    await click(page, '#submit')
  }

  /** Registers a new account in the page and verifies its address with the mailed code: its address. */
  async function registerVerified(page: Page) {
    const email = `second-factor-${process.pid}-${++accounts}@example.com`
    await page.click('#mode-register')
    await page.fill('#email', email)
    await page.fill('#password', PASSWORD)
    await click(page, '#submit')
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    await click(page, '#verify')
    await page.fill('#verify-code', await mailedCode(email))
    await click(page, '#verify-submit')
    expect(await text(page, '#account-verified')).toBe('Yes')
    return email
  }

  it('enrols an authenticator app from its QR code, signs in with its code and with a recovery code', async () => {
    const { page } = await openDemo()
    const email = await registerVerified(page)

    await click(page, '#refresh-factors')
    expect(await text(page, '#factors-state')).toBe('None: signing in takes one step.')
    expect(await page.locator('#new-recovery-codes').isHidden()).toBe(true)

    // the password proves the holder present; the app's QR code and key follow
    await click(page, '#add-totp')
    expect(await page.locator('#factor-proof-form').isVisible()).toBe(true)
    expect(await page.locator('#passkey-name-field').isHidden()).toBe(true)
    await page.fill('#factor-password', 'not the password')
    await click(page, '#factor-proof-submit')
    expect(await page.locator('#factor-password-error').isVisible()).toBe(true)
    expect(await page.locator('#totp-form').isHidden()).toBe(true)
    let mark = service.logLines.length
    await page.fill('#factor-password', PASSWORD)
    await click(page, '#factor-proof-submit')
    expect(requestsSince(mark)).toEqual(['POST /auth/mfa/totp/setup 200'])
    expect(await page.locator('#totp-form').isVisible()).toBe(true)
    // the QR code is shown: an SVG data URL, which the page's policy lets an <img> load
    const qr = page.locator('#totp-qr')
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/)
    expect(
      await page.evaluate(
        "document.getElementById('totp-qr').complete && document.getElementById('totp-qr').naturalWidth > 0",
      ),
    ).toBe(true)
    const secret = (await text(page, '#totp-secret')).replace(/\s/g, '')
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    // the same key as the QR code's URI, which the last answer shows
    const setup = JSON.parse(await text(page, '#result')) as { uri: string }
    expect(new URL(setup.uri).searchParams.get('secret')).toBe(secret)
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-1-qr-code.png'), fullPage: true })

    await page.fill('#totp-code', appCode(secret))
    await click(page, '#totp-confirm')
    expect(await text(page, '#notice-title')).toBe('Authenticator app on')
    const recoveryCodes = await page.locator('#recovery-codes li').allInnerTexts()
    expect(recoveryCodes).toHaveLength(10)
    expect(await page.locator('#factors li .factor-type').allInnerTexts()).toEqual(['Authenticator app'])
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-2-recovery-codes.png'), fullPage: true })
    await click(page, '#recovery-done')
    expect(await page.locator('#recovery-box').isHidden()).toBe(true)

    // a login now asks for the second step, and stores nothing until it passes
    await click(page, '#logout')
    mark = service.logLines.length
    await logIn(page, email)
    expect(requestsSince(mark)).toEqual(['POST /auth/login 200'])
    expect(await text(page, '#session-pill')).toBe('Logged out')
    expect(await page.evaluate(STORED_PAIR)).toBeNull()
    expect(await page.locator('#mfa-form').isVisible()).toBe(true)
    expect(await page.locator('#auth-form').isHidden()).toBe(true)
    expect(await text(page, '#notice-title')).toBe('Second step')
    expect(await text(page, '#mfa-code-label')).toBe('Code from the authenticator app')
    expect(await page.evaluate('document.activeElement.id')).toBe('mfa-code')
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-3-second-step.png'), fullPage: true })

    // the code that turned the app on was the current step's, used once: the next step's is within the drift
    mark = service.logLines.length
    await page.fill('#mfa-code', appCode(secret, 1))
    await click(page, '#mfa-submit')
    expect(requestsSince(mark)).toEqual(['POST /auth/mfa/verify 200', 'GET /auth/sessions 200'])
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#notice-text')).toBe(`Welcome, ${email}: signed in with the authenticator app.`)
    expect(await text(page, '#tokens-changed-why')).toBe('(logged in)')

    // a recovery code instead of the app
    await click(page, '#logout')
    await logIn(page, email)
    await page.click('#mfa-switch')
    expect(await text(page, '#mfa-code-label')).toBe('Recovery code')
    await page.fill('#mfa-code', 'AAAA-AAAA-AAAA')
    await click(page, '#mfa-submit')
    expect(await text(page, '#notice-text')).toBe('Second factor invalid or expired')
    expect(await page.locator('#mfa-form').isVisible()).toBe(true)
    await page.fill('#mfa-code', recoveryCodes[0] ?? '')
    await click(page, '#mfa-submit')
    expect(await text(page, '#notice-text')).toBe(
      `Welcome, ${email}: signed in with a recovery code, now used up.`,
    )

    // the session established with the second factor removes it: a password alone signs in again
    await click(page, '#refresh-factors')
    await page.getByRole('button', { name: /^Remove / }).click()
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Factor removed')
    expect(await text(page, '#factors-state')).toBe('None: signing in takes one step.')
    await click(page, '#logout')
    await logIn(page, email)
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
  })

  it('adds a passkey through the client library, and signs in with it without an address, or as the second step', async () => {
    const { page, webAuthn, authenticatorId } = await openDemo()
    // the browser can use passkeys here: the page offers them
    expect(await page.locator('#passkey-login').isVisible()).toBe(true)
    const email = await registerVerified(page)

    await click(page, '#add-passkey')
    expect(await page.locator('#passkey-name-field').isVisible()).toBe(true)
    await page.fill('#factor-password', PASSWORD)
    await page.fill('#passkey-name', 'Virtual key')
    let mark = service.logLines.length
    await click(page, '#factor-proof-submit')
    expect(await text(page, '#notice-title')).toBe('Passkey added')
    expect(requestsSince(mark)).toEqual([
      'POST /auth/passkeys/register/options 200',
      'POST /auth/passkeys/register/verify 200',
      'GET /auth/mfa/factors 200',
    ])
    expect(await page.locator('#factors li .factor-name').allInnerTexts()).toEqual(['Virtual key'])
    expect(await page.locator('#factors li .factor-type').allInnerTexts()).toEqual(['Passkey'])
    // the authenticator holds one discoverable credential of the relying party `localhost`
    const { credentials } = await webAuthn.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' })
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-4-passkey-added.png'), fullPage: true })

    // signed out, and in again with the passkey alone: no address typed, no password
    await click(page, '#logout')
    // the form keeps the address of the registration: emptied, so that nothing could send it
    await page.fill('#email', '')
    mark = service.logLines.length
    await click(page, '#passkey-login')
    expect(requestsSince(mark)).toEqual([
      'POST /auth/passkeys/login/options 200',
      'POST /auth/passkeys/login/verify 200',
      'GET /auth/sessions 200',
    ])
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#notice-text')).toBe(`Welcome, ${email}: signed in with a passkey.`)
    expect(JSON.parse((await page.evaluate(STORED_PAIR)) as string)).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    })
    const { credentials: used } = await webAuthn.send('WebAuthn.getCredentials', { authenticatorId })
    expect(used[0]?.signCount).toBeGreaterThan(0)
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-5-passkey-sign-in.png'), fullPage: true })

    // a password now asks for the second step, which the passkey completes
    await click(page, '#logout')
    await logIn(page, email)
    expect(await page.locator('#mfa-use-passkey').isVisible()).toBe(true)
    // no authenticator app and no recovery codes (a passkey gives none): the step takes no code at all
    expect(await page.locator('#mfa-code-field').isHidden()).toBe(true)
    expect(await page.locator('#mfa-submit').isHidden()).toBe(true)
    expect(await page.evaluate('document.activeElement.id')).toBe('mfa-title')
    expect(await text(page, '#mfa-lead')).toBe('Use a passkey of this account: the browser asks for it.')
    await page.screenshot({ path: join(SCREENSHOTS, 'mfa-6-passkey-second-step.png'), fullPage: true })
    mark = service.logLines.length
    await click(page, '#mfa-use-passkey')
    expect(requestsSince(mark)).toEqual([
      'POST /auth/passkeys/login/options 200',
      'POST /auth/passkeys/login/verify 200',
      'GET /auth/sessions 200',
    ])
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)

    // the browser's refusal (no passkey of this site on the device any more) is shown, not thrown
    await click(page, '#logout')
    await webAuthn.send('WebAuthn.clearCredentials', { authenticatorId })
    mark = service.logLines.length
    await click(page, '#passkey-login')
    expect(await text(page, '#notice-title')).toBe('Signing in with a passkey failed')
    expect(await text(page, '#result')).toMatch(/^NotAllowedError: /)
    expect(requestsSince(mark)).toEqual(['POST /auth/passkeys/login/options 200'])
    expect(await text(page, '#session-pill')).toBe('Logged out')
  })
})
