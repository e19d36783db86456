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
import { codeIn, emlMailbox, type Mailbox, resetKeyIn } from '../support/mailbox.js'
import { startTestService, type TestService } from '../support/test-service.js'

const available = chromiumAvailable('the browser tests of /demo')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), 'tessera-demo-screenshots')
const PASSWORD = 'correct horse battery'
const NEW_PASSWORD = 'a brand new passphrase'
const MINUTE = 60_000
/** The client's storage item (createTesseraClient's default storageKey), read in the page. */
const STORED_PAIR = "localStorage.getItem('tessera.tokens')"
/** Devices, by the User-Agent they send: the service describes each session's device from it. */
const CHROME_ON_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'
const FIREFOX_ON_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const SAFARI_ON_IOS =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
/** Another code than `code`: a wrong one, and yet well-formed. */
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')
/** ISO 8601 in UTC with milliseconds, as the API writes every instant. */
const INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe.skipIf(!available)('GET /demo in a browser', () => {
  // the service's clock: moved past the access tokens' 15 minutes, it makes every tab's next call a 401
  const clock = createFixedClock(Date.now())
  let service: TestService
  let browser: Browser
  let base: string
  /**
   * A service in development without SMTP_URL, for the flows with a mailed code: it writes each message as an `.eml`
   * file to <DATA_DIR>/outbox/, which `mailbox` reads. Its clock is the system's, so that codes expire and resends
   * are spaced as they are for a person.
   */
  let mailing: TestService
  let mailingBase: string
  let mailbox: Mailbox
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of every page of the test. */
  let problems: string[]
  let accounts = 0

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    service = await startTestService(backends[0]!, { clock })
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
    mailing = await startTestService(backends[0]!, { env: { NODE_ENV: 'development' } })
    await mailing.app.listen({ host: '127.0.0.1', port: 0 })
    mailingBase = `http://127.0.0.1:${(mailing.app.server.address() as AddressInfo).port}`
    mailbox = emlMailbox(mailing.config.storage.dataDir)
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
    await mailbox?.close()
    await mailing?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  /** A fresh profile (its own localStorage), watched for errors; `userAgent` says which device it is. */
  async function newContext(options: { userAgent?: string } = {}) {
    problems = []
    context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      locale: 'en-GB',
      ...options,
    })
    await context.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))",
    )
    return context
  }

  /** The page of the service at `at` (the tests' shared one by default), once it has done what it does on opening. */
  async function openDemo(at = base): Promise<Page> {
    const page = await context.newPage()
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      // Chromium reports every 4xx answer to fetch on the console; the page shows them itself
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text())
    })
    await page.goto(`${at}/demo`)
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    // a page opened logged in lists the sessions at once
    await page.locator('body:not([aria-busy="true"])').waitFor()
    return page
  }

  const newEmail = () => `demo-${++accounts}-${process.pid}@example.com`

  /** The request lines the service (the tests' shared one by default) has logged since `mark` (a count of log lines). */
  function requestsSince(mark: number, from = service) {
    return from.logLines
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

  it('lists the sessions of each device, ends one, and logs out the other sessions (AUTH_SESSIONS=per-device)', async () => {
    // a service of its own, with a session per device; the shared one keeps the specification's one per user
    const perDevice = await startTestService(backends[0]!, { env: { AUTH_SESSIONS: 'per-device' } })
    await perDevice.app.listen({ host: '127.0.0.1', port: 0 })
    const at = `http://127.0.0.1:${(perDevice.app.server.address() as AddressInfo).port}`
    try {
      // two other devices: the account registered on a laptop's Firefox, then logged in on a phone
      const email = await registered(at, FIREFOX_ON_LINUX)
      const login = { email, password: PASSWORD }
      const laptop = await call(at, '/auth/login', login, { userAgent: FIREFOX_ON_LINUX })
      // apart by more than the milliseconds of last_used_at, so that the list's order is never a tie's
      await new Promise((resolve) => setTimeout(resolve, 5))
      const phone = await call(at, '/auth/login', login, { userAgent: SAFARI_ON_IOS })
      await newContext({ userAgent: CHROME_ON_LINUX })
      const page = await openDemo(at)

      let mark = perDevice.logLines.length
      await submit(page, 'login', email, PASSWORD)
      expect(requestsSince(mark, perDevice)).toEqual(['POST /auth/login 200', 'GET /auth/sessions 200'])
      // most recently used first: this browser, the phone, the laptop (its login after the registration), and the
      // registration's own session on the laptop
      const sessions = page.locator('#sessions li')
      expect(await sessions.locator('.device').allInnerTexts()).toEqual([
        'Chrome on Linux',
        'Safari on iOS',
        'Firefox on Linux',
        'Firefox on Linux',
      ])
      expect(await sessions.first().getAttribute('data-current')).toBe('')
      expect(await sessions.first().locator('.this-device').innerText()).toBe('This device')
      expect(await sessions.first().locator('button').count()).toBe(0)
      expect(await page.locator('#sessions li[data-current]').count()).toBe(1)
      const networks = await sessions.evaluateAll((items) =>
        items.map((item) => item.querySelector('dt + dd')?.textContent),
      )
      expect(networks).toEqual(Array(4).fill('127.0.0.0/24'))
      for (const instant of await sessions
        .locator('time')
        .evaluateAll((times) => times.map((time) => time.getAttribute('datetime')))) {
        expect(instant).toMatch(INSTANT)
      }
      // each End button names its session, for a screen reader that lists the buttons
      const endPhone = page.getByRole('button', { name: /^End session: Safari on iOS, last used / })
      expect(await endPhone.count()).toBe(1)
      expect(await page.getByRole('button', { name: /^End session: Firefox on Linux/ }).count()).toBe(2)
      expect(await page.locator('#end-other-sessions').isVisible()).toBe(true)
      expect(await page.locator('#sessions-state').isHidden()).toBe(true)
      await page.screenshot({ path: join(SCREENSHOTS, '13-sessions.png'), fullPage: true })

      // ending the phone's session: its refresh token is refused from then on, the laptop's still works
      const phoneId = await currentSession(at, phone!.access_token)
      expect(await sessions.nth(1).getAttribute('data-session')).toBe(phoneId)
      mark = perDevice.logLines.length
      await endPhone.click()
      await idle(page)
      expect(requestsSince(mark, perDevice)).toEqual([
        `DELETE /auth/sessions/${phoneId} 200`,
        'GET /auth/sessions 200',
      ])
      expect(await text(page, '#notice-title')).toBe('Session ended')
      expect(await text(page, '#notice-text')).toBe(
        'Safari on iOS must log in again: its refresh token is refused from now on.',
      )
      expect(await sessions.locator('.device').allInnerTexts()).toEqual([
        'Chrome on Linux',
        'Firefox on Linux',
        'Firefox on Linux',
      ])
      // the button is gone with its session: the keyboard's focus stays in the section
      expect(await page.evaluate('document.activeElement.id')).toBe('sessions-title')
      await call(at, '/auth/refresh', { refresh_token: phone!.refresh_token }, { status: 401 })
      const laptopNow = await call(at, '/auth/refresh', { refresh_token: laptop!.refresh_token })

      // the laptop logs out by itself while the page still lists it: its End is a 404, and the list follows
      const laptopId = await currentSession(at, laptopNow!.access_token)
      await call(at, '/auth/delete-refresh-token', {}, { accessToken: laptopNow!.access_token })
      mark = perDevice.logLines.length
      await page.locator(`#sessions li[data-session="${laptopId}"] button`).click()
      await idle(page)
      expect(requestsSince(mark, perDevice)).toEqual([
        `DELETE /auth/sessions/${laptopId} 404`,
        'GET /auth/sessions 200',
      ])
      expect(await text(page, '#notice-title')).toBe('Ending the session failed')
      expect(await text(page, '#result-status')).toBe('404')
      expect(await sessions.count()).toBe(2)

      // a device that logs in meanwhile appears on Refresh, with the list as the client gives it in the last answer
      const tablet = await call(at, '/auth/login', login, { userAgent: SAFARI_ON_IOS })
      mark = perDevice.logLines.length
      await page.click('#refresh-sessions')
      await idle(page)
      expect(requestsSince(mark, perDevice)).toEqual(['GET /auth/sessions 200'])
      expect(JSON.parse(await text(page, '#result'))).toEqual([
        {
          id: expect.stringMatching(/^[0-9a-f]{32}$/),
          createdAt: expect.stringMatching(INSTANT),
          lastUsedAt: expect.stringMatching(INSTANT),
          device: 'Safari on iOS',
          clientAddress: '127.0.0.0/24',
          current: false,
        },
        expect.objectContaining({ device: 'Chrome on Linux', current: true }),
        expect.objectContaining({ device: 'Firefox on Linux', current: false }),
      ])
      expect(await sessions.count()).toBe(3)

      // "Log out other sessions": every other device is logged out, this one is not
      const pair = await page.evaluate(STORED_PAIR)
      mark = perDevice.logLines.length
      await page.click('#end-other-sessions')
      await idle(page)
      expect(requestsSince(mark, perDevice)).toEqual([
        'POST /auth/delete-refresh-token 200',
        'GET /auth/sessions 200',
      ])
      // the service logs paths without their query: the page's own list of requests shows the scope
      expect(await page.locator('#activity li').nth(1).innerText()).toMatch(
        /POST\s+\/auth\/delete-refresh-token\?scope=others\s+200/,
      )
      expect(await text(page, '#notice-title')).toBe('Other sessions ended')
      expect(await sessions.locator('.device').allInnerTexts()).toEqual(['Chrome on Linux'])
      expect(await text(page, '#sessions-state')).toBe('No other device is logged in to this account.')
      expect(await page.locator('#end-other-sessions').isHidden()).toBe(true)
      expect(await page.evaluate('document.activeElement.id')).toBe('sessions-title')
      expect(await page.evaluate(STORED_PAIR)).toBe(pair)
      expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
      expect(await text(page, '#tokens-changed-why')).toBe('(logged in)')
      await call(at, '/auth/refresh', { refresh_token: tablet!.refresh_token }, { status: 401 })
      await page.screenshot({ path: join(SCREENSHOTS, '14-other-sessions-ended.png'), fullPage: true })

      // this device's session goes on: its refresh token still works
      await page.evaluate(
        "const pair = JSON.parse(localStorage.getItem('tessera.tokens')); localStorage.setItem('tessera.tokens', JSON.stringify({ ...pair, accessToken: pair.accessToken + 'x' }))",
      )
      mark = perDevice.logLines.length
      await page.click('#call-protected')
      await idle(page)
      expect(requestsSince(mark, perDevice)).toEqual([
        'GET /auth/me 401',
        'POST /auth/refresh 200',
        'GET /auth/me 200',
      ])

      await page.click('#logout')
      await idle(page)
      expect(await page.locator('#sessions-card').isHidden()).toBe(true)
      expect(await sessions.count()).toBe(0)
    } finally {
      await perDevice.close()
    }
  })

  it('with one session per user (the default) lists this device alone, in every tab that asks', async () => {
    await newContext()
    // a tab open before the login, which learns of it from localStorage alone
    const early = await openDemo()
    const page = await openDemo()
    expect(await page.locator('#sessions-card').isHidden()).toBe(true)
    const mark = service.logLines.length
    await submit(page, 'register', newEmail(), PASSWORD)
    expect(requestsSince(mark)).toEqual(['POST /auth/register 200', 'GET /auth/sessions 200'])
    const listed = page.locator('#sessions li')
    expect(await listed.count()).toBe(1)
    expect(await listed.getAttribute('data-current')).toBe('')
    expect(await listed.locator('.this-device').innerText()).toBe('This device')
    expect(await listed.locator('button').count()).toBe(0)
    expect(await text(page, '#sessions-state')).toBe('No other device is logged in to this account.')
    expect(await page.locator('#end-other-sessions').isHidden()).toBe(true)
    const id = await listed.getAttribute('data-session')

    // a tab opened logged in lists the sessions as it opens; one that saw the login in another tab, when asked
    const opened = await openDemo()
    expect(await opened.locator('#sessions li').getAttribute('data-session')).toBe(id)
    await early.locator('#session-pill[data-state="in"]').waitFor()
    expect(await text(early, '#sessions-state')).toBe('Not listed in this tab yet: press Refresh.')
    expect(await early.locator('#sessions li').count()).toBe(0)
    await early.click('#refresh-sessions')
    await idle(early)
    expect(await early.locator('#sessions li').getAttribute('data-session')).toBe(id)

    // a logout in one tab empties the list of the others at once: it was the list of the stored session
    await page.click('#logout')
    await idle(page)
    await opened.locator('#token-state[data-state="out"]').waitFor()
    expect(await opened.locator('#sessions li').count()).toBe(0)
    expect(await text(opened, '#sessions-state')).toBe('Not listed in this tab yet: press Refresh.')
  })

  it('resets a forgotten password, then logs in with a code, each code read from the mail the service wrote', async () => {
    const email = await registered(mailingBase)
    await newContext()
    const page = await openDemo(mailingBase)

    // "Forgot password?": first the address alone
    await page.click('#mode-reset')
    expect(await page.evaluate('document.activeElement.id')).toBe('flow-title')
    expect(await text(page, '#flow-title')).toBe('Reset your password')
    expect(await page.locator('#auth-tabs').isHidden()).toBe(true)
    expect(await page.locator('#code-field').isHidden()).toBe(true)
    expect(await page.locator('#password-field').isHidden()).toBe(true)
    expect(await text(page, '#submit')).toBe('Send the code')
    await page.fill('#email', email)
    let mark = mailing.logLines.length
    await page.click('#submit')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual(['POST /auth/email/send-code 200'])
    expect(await text(page, '#notice-title')).toBe('Code sent')
    expect(await text(page, '#notice-text')).toBe(
      `If an account has the address ${email}, a six-digit code is on its way to it.`,
    )
    // then the code, with the new password
    expect(await page.evaluate('document.activeElement.id')).toBe('code')
    expect(await page.getAttribute('#code', 'autocomplete')).toBe('one-time-code')
    expect(await text(page, '#password-label')).toBe('New password')
    expect(await page.getAttribute('#password', 'autocomplete')).toBe('new-password')
    expect(await text(page, '#submit')).toBe('Set the password and log in')
    await page.screenshot({ path: join(SCREENSHOTS, '15-reset-code-sent.png'), fullPage: true })
    expect(await text(page, '#code-label')).toBe('Code or reset key from the e-mail')
    const { code: resetCode, key: resetKey } = await mailedReset(email)

    // a wrong code: the service's message, and the form stays as it was
    await page.fill('#code', wrongCode(resetCode))
    await page.fill('#password', NEW_PASSWORD)
    mark = mailing.logLines.length
    await page.click('#submit')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual(['POST /auth/password/reset 400'])
    expect(await text(page, '#notice-title')).toBe('Setting the password failed')
    expect(await text(page, '#notice-text')).toBe('Invalid or expired verification code')
    expect(await text(page, '#session-pill')).toBe('Logged out')
    expect(await page.locator('#code-field').isVisible()).toBe(true)

    // the reset key of the same mail, as it is written there (groups and hyphens), which wrong codes never use up
    await page.fill('#code', resetKey)
    mark = mailing.logLines.length
    await page.click('#submit')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual(['POST /auth/password/reset 200', 'GET /auth/sessions 200'])
    expect(await text(page, '#notice-title')).toBe('Password changed')
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await text(page, '#tokens-changed-why')).toBe('(logged in)')
    expect(await page.evaluate(STORED_PAIR)).not.toBeNull()
    await page.screenshot({ path: join(SCREENSHOTS, '16-password-reset.png'), fullPage: true })

    await page.click('#logout')
    await idle(page)
    // the form is back to its login, with the other ways offered
    expect(await text(page, '#submit')).toBe('Log in')
    expect(await page.locator('#auth-tabs').isVisible()).toBe(true)

    // "Log in with a code": the address, then the code alone
    await page.click('#mode-code')
    expect(await text(page, '#flow-title')).toBe('Log in with a code')
    await page.fill('#email', email)
    mark = mailing.logLines.length
    await page.click('#submit')
    await idle(page)
    expect(await page.locator('#password-field').isHidden()).toBe(true)
    expect(await text(page, '#submit')).toBe('Log in')
    const loginCode = await mailedCode(email)

    // another code asked for at once: the resend interval, and how long to wait
    await page.click('#resend-code')
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Sending the code failed')
    expect(await text(page, '#notice-text')).toMatch(
      /^Too many requests, retry later: try again in (\d+ s|1 min \d+ s)$/,
    )
    expect(await text(page, '#result-status')).toBe('429')

    await page.fill('#code', loginCode)
    await page.click('#submit')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual([
      'POST /auth/email/send-code 200',
      'POST /auth/email/send-code 429',
      'POST /auth/login/email-code 200',
      'GET /auth/sessions 200',
    ])
    expect(await text(page, '#notice-title')).toBe('Logged in')
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    expect(await page.locator('#sessions li').count()).toBe(1)
    await page.screenshot({ path: join(SCREENSHOTS, '17-logged-in-with-code.png'), fullPage: true })

    // the new password is the account's; the old one no longer
    await call(mailingBase, '/auth/login', { email, password: PASSWORD }, { status: 401 })
    await call(mailingBase, '/auth/login', { email, password: NEW_PASSWORD })
  })

  it('shows whether the address is verified, and verifies it with the code mailed to it', async () => {
    await newContext()
    const page = await openDemo(mailingBase)
    const email = newEmail()
    await submit(page, 'register', email, PASSWORD)
    expect(await text(page, '#account-verified')).toBe('No')
    expect(await page.locator('#verify').isVisible()).toBe(true)
    expect(await page.locator('#verify-form').isHidden()).toBe(true)

    let mark = mailing.logLines.length
    await page.click('#verify')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual(['POST /auth/me/send-code 200'])
    expect(await text(page, '#notice-title')).toBe('Code sent')
    expect(await text(page, '#notice-text')).toBe(`A six-digit code is on its way to ${email}.`)
    expect(await page.locator('#verify').isHidden()).toBe(true)
    expect(await page.evaluate('document.activeElement.id')).toBe('verify-code')
    expect(await page.getAttribute('#verify-code', 'autocomplete')).toBe('one-time-code')
    await page.screenshot({ path: join(SCREENSHOTS, '18-verify-code-sent.png'), fullPage: true })
    const code = await mailedCode(email)

    await page.fill('#verify-code', wrongCode(code))
    await page.click('#verify-submit')
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Verification failed')
    expect(await text(page, '#notice-text')).toBe('Invalid or expired verification code')
    expect(await text(page, '#account-verified')).toBe('No')

    mark = mailing.logLines.length
    await page.fill('#verify-code', code)
    await page.click('#verify-submit')
    await idle(page)
    expect(requestsSince(mark, mailing)).toEqual(['POST /auth/email/verify 200'])
    expect(await text(page, '#notice-title')).toBe('Address verified')
    expect(await text(page, '#account-verified')).toBe('Yes')
    expect(await page.locator('#verify').isHidden()).toBe(true)
    expect(await page.locator('#verify-form').isHidden()).toBe(true)
    // the form is gone with the button pressed: the keyboard's focus stays in the section
    expect(await page.evaluate('document.activeElement.id')).toBe('account-title')
    expect(JSON.parse(await text(page, '#result'))).toMatchObject({ email, emailVerified: true })

    // the service says so too, to a tab that asks
    const other = await openDemo(mailingBase)
    expect(await text(other, '#account-verified')).toBe('—')
    await other.click('#whoami')
    await idle(other)
    expect(await text(other, '#account-verified')).toBe('Yes')
    await page.screenshot({ path: join(SCREENSHOTS, '19-verified.png'), fullPage: true })
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

  /** An account registered through the API, not the page (of the service at `at`, the shared one by default): its e-mail. */
  async function registered(at = base, userAgent?: string) {
    const email = newEmail()
    await call(at, '/auth/register', { email, password: PASSWORD }, { userAgent })
    return email
  }

  /** The code of the next mail to `address` that carries one (a notice, such as "password reset", carries none). */
  async function mailedCode(address: string) {
    for (;;) {
      const code = codeIn(await mailbox.next(address))
      if (code !== null) return code
    }
  }

  /** The code and the reset key of the next reset mail to `address`. */
  async function mailedReset(address: string) {
    for (;;) {
      const mail = await mailbox.next(address)
      const code = codeIn(mail)
      const key = resetKeyIn(mail)
      if (code !== null && key !== null) return { code, key }
    }
  }

  /** The id of the session of `accessToken`, as `GET /auth/sessions` marks it current. */
  async function currentSession(at: string, accessToken: string) {
    const answer = await fetch(`${at}/auth/sessions`, { headers: { authorization: `Bearer ${accessToken}` } })
    expect(answer.status).toBe(200)
    const { data } = (await answer.json()) as { data: Array<{ id: string; current: boolean }> }
    return data.find((session) => session.current)?.id
  }

  /** A POST to the API as a device other than the page's; fails the test on an answer other than `status`. */
  async function call(
    at: string,
    path: string,
    body: unknown,
    options: { userAgent?: string; accessToken?: string; status?: number } = {},
  ) {
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (options.userAgent) headers['user-agent'] = options.userAgent
    if (options.accessToken) headers.authorization = `Bearer ${options.accessToken}`
    const answer = await fetch(`${at}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    expect({ path, status: answer.status }).toEqual({ path, status: options.status ?? 200 })
    return ((await answer.json()) as { data: { access_token: string; refresh_token: string } | null }).data
  }
})
