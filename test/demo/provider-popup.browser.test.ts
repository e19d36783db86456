import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { codeIn, emlMailbox, type Mailbox } from '../support/mailbox.js'
import type { TestOidcProvider } from '../support/oidc-provider.js'
import { type ServiceWithProvider, startServiceWithOidcProvider } from '../support/provider-service.js'
import { useTempDir } from '../support/temp-dir.js'

// The demo page's "Sign in with Google" in Chromium: the popup, the provider, the service's callback page and its
// message to the page, end to end. The service runs as a child process (the built `tessera`: `npm run build` first),
// its `google` pointed at a real OpenID provider (oidc-provider over HTTPS on 127.0.0.1) whose certificate it trusts
// through NODE_EXTRA_CA_CERTS, and the browser through ignoreHTTPSErrors.

const available = chromiumAvailable('the browser tests of the provider popup')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), 'tessera-demo-screenshots')
/** The client's storage item (createTesseraClient's default storageKey), read in the page. */
const STORED_PAIR = "localStorage.getItem('tessera.tokens')"

describe.skipIf(!available)('the demo page signs in with a provider in a popup', () => {
  const temp = useTempDir('demo-provider-popup')
  let service: ServiceWithProvider<TestOidcProvider>
  let mailbox: Mailbox
  let browser: Browser
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of the demo page. */
  let problems: string[]
  let accounts = 0

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    // the callback page posts to FRONTEND_ORIGIN, by default PUBLIC_URL's origin: the demo page's; without SMTP_URL,
    // the service's mail is written to <DATA_DIR>/outbox/, which `mailbox` reads
    service = await startServiceWithOidcProvider(temp.path, { NODE_ENV: 'development' })
    mailbox = emlMailbox(temp.path)
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await service?.stop()
    await mailbox?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  /** A fresh profile (no session at the provider, nothing in localStorage) and the demo page in it, opened. */
  async function openDemo(): Promise<Page> {
    problems = []
    // the provider's certificate is self-signed
    context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      locale: 'en-GB',
      ignoreHTTPSErrors: true,
    })
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
    await page.goto(`${service.origin}/demo`)
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    await idle(page)
    return page
  }

  /** Waits until the page's action has finished (its buttons are enabled again). */
  const idle = (page: Page) => page.locator('body[aria-busy="false"]').waitFor()
  const text = (page: Page, selector: string) => page.locator(selector).innerText()

  /**
   * A provider account of its own, which the provider's next sign-in signs in, vouching for its address: its e-mail
   * (`email`, by default a new one).
   */
  function providerAccount(name: string, email = `popup-${process.pid}-${++accounts}@example.com`) {
    service.provider.setAccount({
      sub: `popup-subject-${process.pid}-${accounts}`,
      email,
      email_verified: true,
      name,
    })
    return email
  }

  /** A POST to the API, outside the browser; fails the test on an answer other than 200. */
  async function post(path: string, body: unknown) {
    const answer = await fetch(`${service.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect({ path, status: answer.status }).toEqual({ path, status: 200 })
  }

  /** Clicks the provider's button, and resolves with the popup it opened. */
  async function clickSignIn(page: Page) {
    const popup = page.waitForEvent('popup')
    await page.getByRole('button', { name: 'Sign in with Google' }).click()
    return popup
  }

  it('offers one button per provider; the popup signs in and the page shows the account it created', async () => {
    const page = await openDemo()
    expect(await page.locator('#provider-buttons button').allInnerTexts()).toEqual(['Sign in with Google'])
    expect(await text(page, '#session-pill')).toBe('Logged out')
    await page.screenshot({ path: join(SCREENSHOTS, 'provider-1-logged-out.png'), fullPage: true })

    const email = providerAccount('Ada Lovelace')
    const popup = await clickSignIn(page)
    // the callback page posts the result to the page and closes itself
    await popup.waitForEvent('close')
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Logged in')
    expect(await text(page, '#notice-text')).toBe(`Welcome, ${email}: signed in with Google.`)
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#token-state')).toBe('Logged in')
    expect(await text(page, '#tokens-changed-why')).toBe('(logged in)')
    expect(JSON.parse((await page.evaluate(STORED_PAIR)) as string)).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    })
    // the account the sign-in made: the provider's name as the nickname, no password, the provider linked
    expect(await text(page, '#profile-nickname')).toBe('Ada Lovelace')
    expect(await text(page, '#profile-username')).toBe('not set')
    expect(await text(page, '#profile-role')).toBe('user')
    expect(await text(page, '#profile-password')).toBe('None: the account signs in with a provider')
    expect(await page.locator('#linked-providers li').allInnerTexts()).toEqual(['Google\nUnlink'])
    expect(await page.locator('#no-providers').isHidden()).toBe(true)
    expect(await page.locator('#auth-panel').isHidden()).toBe(true)
    // the sessions are listed, as after any login
    expect(await page.locator('#sessions li').count()).toBe(1)
    expect(JSON.parse(await text(page, '#result'))).toMatchObject({
      email,
      providers: ['google'],
      passwordSet: false,
    })
    await page.screenshot({ path: join(SCREENSHOTS, 'provider-2-signed-in.png'), fullPage: true })

    // the only way in: the service refuses to unlink it, and the page says why
    await page.getByRole('button', { name: 'Unlink Google' }).click()
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Unlinking Google failed')
    expect(await text(page, '#notice-text')).toBe('This is the only way to sign in to the account')
    expect(await text(page, '#result-status')).toBe('409')
    expect(await page.locator('#linked-providers li').count()).toBe(1)

    // the page's session is the service's: a reload of the page is still logged in, as the same account
    await page.reload()
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    await idle(page)
    await page.click('#whoami')
    await idle(page)
    expect(await text(page, '#account-email')).toBe(email)
    expect(await page.locator('#linked-providers li').count()).toBe(1)
  })

  it('links the provider to the verified account that has the address, and unlinks it from there', async () => {
    // registered with a code mailed to the address: an account whose address was never proved would lose its
    // password to the provider's proof (docs/api.md R4.15.1)
    const email = `popup-${process.pid}-${++accounts}@example.com`
    await post('/auth/email/send-code', { email, purpose: 'register' })
    const code = codeIn(await mailbox.next(email))
    await post('/auth/register', { email, password: 'correct horse battery', verification_code: code })
    const page = await openDemo()
    providerAccount('Grace Hopper', email)
    await (await clickSignIn(page)).waitForEvent('close')
    await idle(page)
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#profile-password')).toBe('Set')
    expect(await page.locator('#linked-providers li').allInnerTexts()).toEqual(['Google\nUnlink'])

    await page.getByRole('button', { name: 'Unlink Google' }).click()
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Google unlinked')
    expect(await text(page, '#notice-text')).toBe('Signing in with Google no longer reaches this account.')
    expect(await page.locator('#linked-providers li').count()).toBe(0)
    expect(await text(page, '#no-providers')).toBe('None')
    expect(JSON.parse(await text(page, '#result'))).toMatchObject({ email, providers: [], passwordSet: true })
    // the button is gone with its provider: the keyboard's focus stays in the section
    expect(await page.evaluate('document.activeElement.id')).toBe('profile-title')
    await page.screenshot({ path: join(SCREENSHOTS, 'provider-3-unlinked.png'), fullPage: true })
  })

  it('a sign-in declined at the provider: the page shows the service message and stays logged out', async () => {
    const page = await openDemo()
    providerAccount('Declines')
    service.provider.setRefusal({ error: 'access_denied' })
    try {
      const popup = await clickSignIn(page)
      await popup.waitForEvent('close')
      await idle(page)
    } finally {
      service.provider.setRefusal(null)
    }
    expect(await text(page, '#notice-title')).toBe('Signing in with Google failed')
    expect(await text(page, '#notice-text')).toBe('The sign-in was cancelled')
    expect(await text(page, '#result-status')).toBe('401')
    expect(await text(page, '#session-pill')).toBe('Logged out')
    expect(await page.evaluate(STORED_PAIR)).toBeNull()
    await page.screenshot({ path: join(SCREENSHOTS, 'provider-4-cancelled.png'), fullPage: true })
  })

  it('a popup closed before the sign-in ends: the page says so and stays logged out', async () => {
    const page = await openDemo()
    providerAccount('Closes the window')
    // the popup shows a page where the sign-in stops, as the provider's does while the person looks at it (the start
    // is answered in its place: Playwright routes no redirect's next hop)
    await context.route(
      (url) => url.pathname === '/auth/oauth/google/start',
      (route) => route.fulfill({ contentType: 'text/html', body: '<title>At the provider</title>' }),
    )
    const popup = await clickSignIn(page)
    await popup.waitForLoadState()
    expect(await popup.title()).toBe('At the provider')
    await popup.close()
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Signing in with Google failed')
    expect(await text(page, '#notice-text')).toBe('The sign-in window was closed')
    expect(await text(page, '#result-status')).toBe('no answer')
    expect(await text(page, '#session-pill')).toBe('Logged out')
    // the page can start again at once
    expect(await page.getByRole('button', { name: 'Sign in with Google' }).isEnabled()).toBe(true)
  })
})
