import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { CLIENT_NOT_BUILT, DEMO_NOT_BUILT, demoRoutes } from '../../src/routes/demo-routes.js'
import { backends } from '../support/backends.js'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { startTestService, type TestService } from '../support/test-service.js'

const available = chromiumAvailable('the browser tests of /demo')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), 'tessera-demo-screenshots')
const PASSWORD = 'correct horse battery'
const MINUTE = 60_000
/** The client's storage item (createTesseraClient's default storageKey), read in the page. */
const STORED_PAIR = "localStorage.getItem('tessera.tokens')"

describe.skipIf(!available)('GET /demo in a browser', () => {
  // the service's clock: moved past the access tokens' 15 minutes, it makes every tab's next call a 401
  const clock = createFixedClock(Date.now())
  let service: TestService
  let browser: Browser
  let base: string
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of every page of the test. */
  let problems: string[]
  let accounts = 0

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    service = await startTestService(backends[0]!, { clock })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
    browser = await launchChromium([
      // two pages of one context run side by side: neither is a throttled background tab
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows',
    ])
  })
  afterAll(async () => {
    await browser?.close()
    await service?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  /** A fresh profile (its own localStorage), watched for errors. */
  async function newContext() {
    problems = []
    context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: 'en-GB' })
    await context.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))",
    )
    return context
  }

  async function openDemo(): Promise<Page> {
    const page = await context.newPage()
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      // Chromium reports every 4xx answer to fetch on the console; the page shows them itself
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text())
    })
    await page.goto(`${base}/demo`)
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    return page
  }

  const newEmail = () => `demo-${++accounts}-${process.pid}@example.com`

  /** The request lines the service has logged since `mark` (a count of log lines). */
  function requestsSince(mark: number) {
    return service.logLines
      .slice(mark)
      .map((line) => JSON.parse(line) as { msg: string; method: string; path: string; statusCode: number })
      .filter((record) => record.msg === 'request')
      .map((record) => `${record.method} ${record.path} ${record.statusCode}`)
  }

  async function submit(page: Page, mode: 'login' | 'register', email: string, password: string) {
    await page.click(`#mode-${mode}`)
    await page.fill('#email', email)
    await page.fill('#password', password)
    await page.click('#submit')
    await idle(page)
  }

  /** Waits until the page's call has finished (its buttons are enabled again). */
  const idle = (page: Page) => page.locator('body[aria-busy="false"]').waitFor()

  const text = (page: Page, selector: string) => page.locator(selector).innerText()

  it('registers, shows field errors and the envelope message, logs in, asks who it is, calls GET /auth/me and logs out', async () => {
    await newContext()
    const page = await openDemo()
    const response = await page.request.get(`${base}/demo`)
    expect(response.headers()['content-security-policy']).toContain("script-src 'self'")
    expect(await text(page, '#session-pill')).toBe('Logged out')
    expect(await text(page, '#token-state')).toBe('Logged out')

    // a 400: the envelope's message, and each field's own message under its field
    await submit(page, 'register', 'not an address', 'short')
    expect(await text(page, '#notice-title')).toBe('Registration failed')
    expect(await text(page, '#notice-text')).toBe('Invalid request: /email must be a valid e-mail address')
    expect(await text(page, '#email-error')).toBe('Must be a valid e-mail address')
    expect(await page.getAttribute('#email', 'aria-invalid')).toBe('true')
    expect(await text(page, '#result-status')).toBe('400')
    await page.screenshot({ path: join(SCREENSHOTS, '1-register-400.png'), fullPage: true })

    const email = newEmail()
    await submit(page, 'register', email, 'short')
    expect(await text(page, '#password-error')).toBe('Must have 8 to 100 characters of well-formed Unicode')
    expect(await page.locator('#email-error').isHidden()).toBe(true)

    await submit(page, 'register', email, PASSWORD)
    expect(await text(page, '#notice-title')).toBe('Account created')
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#token-state')).toBe('Logged in')
    expect(await text(page, '#access-expiry')).toMatch(/^expires \d\d:\d\d:\d\d$/)
    expect(await text(page, '#access-remaining')).toMatch(/^\(in 1[45] min \d+ s\)$/)
    expect(await text(page, '#tokens-changed-why')).toBe('(logged in)')
    await page.screenshot({ path: join(SCREENSHOTS, '2-registered.png'), fullPage: true })

    await page.click('#logout')
    await idle(page)
    expect(await text(page, '#session-pill')).toBe('Logged out')

    // a wrong password is a 401 of login: shown, and never taken for an expired token
    let mark = service.logLines.length
    await submit(page, 'login', email, 'wrong horse battery')
    expect(await text(page, '#notice-title')).toBe('Login failed')
    expect(await text(page, '#notice-text')).toBe('E-mail or password wrong')
    expect(requestsSince(mark)).toEqual(['POST /auth/login 401'])
    await page.screenshot({ path: join(SCREENSHOTS, '3-login-401.png'), fullPage: true })

    await submit(page, 'register', email, PASSWORD)
    expect(await text(page, '#notice-text')).toBe('E-mail already registered')

    await submit(page, 'login', email.toUpperCase(), PASSWORD)
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)

    await page.click('#whoami')
    await idle(page)
    expect(await text(page, '#account-email')).toBe(email)
    expect(await text(page, '#account-id')).toMatch(/^[1-9]\d{9}$/)
    expect(JSON.parse(await text(page, '#result'))).toMatchObject({ email, id: expect.any(String) })

    mark = service.logLines.length
    await page.click('#call-protected')
    await idle(page)
    expect(await text(page, '#result-status')).toBe('200')
    expect(JSON.parse(await text(page, '#result'))).toMatchObject({ code: 200, data: { email } })
    expect(await page.locator('#activity li').first().innerText()).toMatch(/GET\s+\/auth\/me\s+200/)
    expect(requestsSince(mark)).toEqual(['GET /auth/me 200'])
    await page.screenshot({ path: join(SCREENSHOTS, '4-protected-call.png'), fullPage: true })

    mark = service.logLines.length
    await page.click('#logout')
    await idle(page)
    expect(requestsSince(mark)).toEqual(['POST /auth/delete-refresh-token 200'])
    expect(await text(page, '#session-pill')).toBe('Logged out')
    expect(await text(page, '#tokens-changed-why')).toBe('(logged out)')
    expect(await page.evaluate('localStorage.length')).toBe(0)
    await page.screenshot({ path: join(SCREENSHOTS, '5-logged-out.png'), fullPage: true })

    // a narrow screen: one column
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: join(SCREENSHOTS, '6-narrow.png'), fullPage: true })
  })

  it('refreshes an access token made invalid in localStorage once, and the call succeeds', async () => {
    await newContext()
    const page = await openDemo()
    await submit(page, 'register', newEmail(), PASSWORD)
    const before = await page.evaluate(STORED_PAIR)
    // the page's tokens, as another script of the origin could change them: the access token's signature broken
    await page.evaluate(
      "const pair = JSON.parse(localStorage.getItem('tessera.tokens')); localStorage.setItem('tessera.tokens', JSON.stringify({ ...pair, accessToken: pair.accessToken + 'x' }))",
    )

    const mark = service.logLines.length
    await page.click('#call-protected')
    await idle(page)
    expect(requestsSince(mark)).toEqual(['GET /auth/me 401', 'POST /auth/refresh 200', 'GET /auth/me 200'])
    expect(await text(page, '#result-status')).toBe('200')
    expect(await text(page, '#session-pill')).toMatch(/^Logged in/)
    expect(await text(page, '#tokens-changed-why')).toBe('(refreshed)')
    const after = await page.evaluate(STORED_PAIR)
    expect(after).not.toBe(before)
    expect(await page.locator('#activity li[data-refresh]').count()).toBe(1)
    await page.screenshot({ path: join(SCREENSHOTS, '7-refreshed.png'), fullPage: true })
  })

  it('two tabs that get a 401 at the same moment, 20 rounds in a row, share one refresh per round and both stay logged in', async () => {
    await newContext()
    const tabs = [await openDemo(), await openDemo()] as const
    await submit(tabs[0], 'login', await registered(), PASSWORD)
    // the other tab sees the login in localStorage
    await tabs[1].locator('#session-pill[data-state="in"]').waitFor()

    // each round, both tabs' first GET /auth/me are held until both have been sent: both carry the expired token
    let held: Route[] = []
    let armed = false
    await context.route('**/auth/me', async (route) => {
      if (!armed) return route.continue()
      held.push(route)
      if (held.length < 2) return
      armed = false
      const both = held
      held = []
      await Promise.all(both.map((each) => each.continue()))
    })

    for (let round = 1; round <= 20; round++) {
      clock.advance(16 * MINUTE)
      armed = true
      const mark = service.logLines.length
      // a click dispatched in the page: Playwright's own click waits for animation frames, slow in a second tab
      await Promise.all(tabs.map((tab) => tab.evaluate("document.getElementById('call-protected').click()")))
      await Promise.all(tabs.map(idle))
      const lines = requestsSince(mark)
      expect({ round, lines: lines.toSorted() }).toEqual({
        round,
        lines: [
          'GET /auth/me 200',
          'GET /auth/me 200',
          'GET /auth/me 401',
          'GET /auth/me 401',
          'POST /auth/refresh 200',
        ],
      })
      for (const tab of tabs) {
        expect(await text(tab, '#result-status')).toBe('200')
        expect(await tab.getAttribute('#session-pill', 'data-state')).toBe('in')
      }
    }
    await tabs[1].screenshot({ path: join(SCREENSHOTS, '8-second-tab.png'), fullPage: true })
  })

  it("after a logout in one tab, the other tab's next call ends its session", async () => {
    await newContext()
    // a tab open before the login, which learns of it from localStorage alone (its client never held the tokens)
    const early = await openDemo()
    const first = await openDemo()
    await submit(first, 'login', await registered(), PASSWORD)
    await early.locator('#session-pill[data-state="in"]').waitFor()
    // the second tab opens logged in, from localStorage
    const tabs = [first, await openDemo()] as const
    expect(await tabs[1].getAttribute('#session-pill', 'data-state')).toBe('in')

    let mark = service.logLines.length
    await tabs[0].click('#logout')
    await idle(tabs[0])
    expect(requestsSince(mark)).toEqual(['POST /auth/delete-refresh-token 200'])
    // the other tab's tokens' state shows it at once; its session ends on its next call
    await tabs[1].locator('#token-state[data-state="out"]').waitFor()
    expect(await text(tabs[1], '#session-pill')).toMatch(/^Logged in/)
    expect(await text(tabs[1], '#token-state-note')).toBe(
      'by another tab: this tab finds out on its next call',
    )
    await tabs[1].screenshot({ path: join(SCREENSHOTS, '9-logged-out-elsewhere.png'), fullPage: true })

    mark = service.logLines.length
    await tabs[1].click('#call-protected')
    await idle(tabs[1])
    expect(await text(tabs[1], '#session-pill')).toBe('Logged out')
    expect(await text(tabs[1], '#notice-title')).toBe('Your session has ended')
    expect(await text(tabs[1], '#notice-text')).toBe('You logged out in another tab: log in again.')
    expect(await tabs[1].locator('#auth-panel').isVisible()).toBe(true)
    expect(await text(tabs[1], '#result')).toBe('Nothing was sent: Not logged in.')
    await tabs[1].screenshot({ path: join(SCREENSHOTS, '10-session-ended.png'), fullPage: true })

    await early.click('#call-protected')
    await idle(early)
    expect(await text(early, '#session-pill')).toBe('Logged out')
    expect(await text(early, '#notice-text')).toBe('This browser has no tokens any more: log in again.')
    // nothing was sent by either: there was no token left to send
    expect(requestsSince(mark)).toEqual([])
  })

  it('says how to build the client when it is missing', async () => {
    const bare = Fastify()
    await bare.register(demoRoutes, { clientFile: new URL('./no-such-client/index.js', import.meta.url) })
    await bare.listen({ host: '127.0.0.1', port: 0 })
    try {
      await newContext()
      const page = await context.newPage()
      page.on('pageerror', (error) => problems.push(error.message))
      await page.goto(`http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/demo`)
      await page.locator('#client-missing').waitFor()
      expect(await text(page, '#client-missing')).toBe(CLIENT_NOT_BUILT)
      expect(await text(page, '#session-pill')).toBe('Client not loaded')
      await page.screenshot({ path: join(SCREENSHOTS, '11-client-missing.png'), fullPage: true })
    } finally {
      await bare.close()
    }
  })

  it('says how to build the demo when it is not built', async () => {
    const bare = Fastify()
    await bare.register(demoRoutes, { pageFolder: new URL('./no-such-build/', import.meta.url) })
    await bare.listen({ host: '127.0.0.1', port: 0 })
    try {
      await newContext()
      const page = await context.newPage()
      page.on('pageerror', (error) => problems.push(error.message))
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      await page.goto(`http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/demo`)
      expect(await text(page, '#client-missing')).toBe(DEMO_NOT_BUILT)
      expect(await page.locator('#client-missing').isVisible()).toBe(true)
      expect(await text(page, '#session-pill')).toBe('Not built')
      // styled by the sources' demo.css
      expect(await page.evaluate('document.styleSheets[0].cssRules.length')).toBeGreaterThan(50)
      await page.screenshot({ path: join(SCREENSHOTS, '12-demo-not-built.png'), fullPage: true })
    } finally {
      await bare.close()
    }
  })

  /** An account registered through the API, not the page: its e-mail. */
  async function registered() {
    const email = newEmail()
    const answer = await fetch(`${base}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    })
    expect(answer.status).toBe(200)
    return email
  }
})
