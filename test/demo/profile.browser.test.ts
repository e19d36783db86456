import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { startTestService, type TestService } from '../support/test-service.js'

// The demo page's profile in Chromium: the three fields edited in its form, the avatar uploaded and removed, against
// the real service listening on 127.0.0.1. The provider buttons are provider-popup.browser.test.ts's.

const available = chromiumAvailable('the browser tests of the profile on /demo')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.DEMO_SCREENSHOTS ?? join(tmpdir(), 'tessera-demo-screenshots')
const PASSWORD = 'correct horse battery'
/** A PNG of one pixel. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
)

describe.skipIf(!available)("the demo page's profile", () => {
  let service: TestService
  let base: string
  let browser: Browser
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of the page. */
  let problems: string[]
  let accounts = 0

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    service = await startTestService(backends[0]!)
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await service?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  /** A fresh profile, and the demo page in it registered with a new account: the page and the account's e-mail. */
  async function registeredPage(): Promise<{ page: Page; email: string }> {
    problems = []
    context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: 'en-GB' })
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
    await page.goto(`${base}/demo`)
    await page.locator('#session-pill:not([data-state="loading"])').waitFor()
    await idle(page)
    const email = newEmail()
    await page.click('#mode-register')
    await page.fill('#email', email)
    await page.fill('#password', PASSWORD)
    await page.click('#submit')
    await idle(page)
    expect(await text(page, '#session-pill')).toBe(`Logged in as ${email}`)
    return { page, email }
  }

  const newEmail = () => `profile-${++accounts}-${process.pid}@example.com`
  /** A username no other test takes. */
  const newUsername = () => `demo_${process.pid}.${accounts}`

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

  it('shows the profile of the account, and saves the fields that were changed', async () => {
    const { page, email } = await registeredPage()
    expect(await page.locator('#profile-card').isVisible()).toBe(true)
    expect(await text(page, '#profile-username')).toBe('not set')
    expect(await text(page, '#profile-nickname')).toBe('not set')
    expect(await text(page, '#profile-bio')).toBe('not set')
    expect(await text(page, '#profile-role')).toBe('user')
    expect(await text(page, '#profile-password')).toBe('Set')
    expect(await text(page, '#no-providers')).toBe('None')
    expect(await text(page, '#avatar-initial')).toBe(email.charAt(0).toUpperCase())
    expect(await page.locator('#avatar').isHidden()).toBe(true)
    expect(await page.locator('#avatar-remove').isHidden()).toBe(true)

    const username = newUsername()
    await page.fill('#username', username.toUpperCase())
    await page.fill('#nickname', 'Ada')
    await page.fill('#bio', 'Counts.\nAnd computes.')
    const sent = page.waitForRequest((request) => request.url().endsWith('/auth/profile'))
    const mark = service.logLines.length
    await page.click('#profile-save')
    await idle(page)
    expect(JSON.parse((await sent).postData() ?? '')).toEqual({
      username: username.toUpperCase(),
      nickname: 'Ada',
      bio: 'Counts.\nAnd computes.',
    })
    expect(requestsSince(mark)).toEqual(['PUT /auth/profile 200'])
    expect(await text(page, '#notice-title')).toBe('Profile saved')
    expect(await text(page, '#notice-text')).toBe('Changed: username, nickname, bio.')
    // as the service stored them: the username in lower case
    expect(await text(page, '#profile-username')).toBe(username)
    expect(await page.inputValue('#username')).toBe(username)
    expect(await text(page, '#profile-nickname')).toBe('Ada')
    expect(await text(page, '#profile-bio')).toBe('Counts.\nAnd computes.')
    expect(await text(page, '#avatar-initial')).toBe('A')
    await page.screenshot({ path: join(SCREENSHOTS, 'profile-1-saved.png'), fullPage: true })

    // an emptied field is cleared; the others, unchanged, are not sent
    await page.fill('#nickname', '')
    const cleared = page.waitForRequest((request) => request.url().endsWith('/auth/profile'))
    await page.click('#profile-save')
    await idle(page)
    expect(JSON.parse((await cleared).postData() ?? '')).toEqual({ nickname: null })
    expect(await text(page, '#profile-nickname')).toBe('not set')
    expect(await text(page, '#profile-username')).toBe(username)

    // the service says so too, to a tab that asks
    const other = await context.newPage()
    await other.goto(`${base}/demo`)
    await idle(other)
    expect(await text(other, '#profile-unknown')).toBe(
      'This tab does not know the account yet: press “Who am I?”.',
    )
    await other.click('#whoami')
    await idle(other)
    expect(await text(other, '#profile-username')).toBe(username)
    expect(await text(other, '#profile-bio')).toBe('Counts.\nAnd computes.')
  })

  it('shows a refused value under its field, and a username another account has', async () => {
    const first = await registeredPage()
    const username = newUsername()
    await first.page.fill('#username', username)
    await first.page.click('#profile-save')
    await idle(first.page)
    await context.close()

    const { page } = await registeredPage()
    await page.fill('#username', 'no spaces')
    await page.click('#profile-save')
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Saving the profile failed')
    expect(await text(page, '#result-status')).toBe('400')
    expect(await text(page, '#username-error')).toMatch(/^Must /)
    expect(await page.getAttribute('#username', 'aria-invalid')).toBe('true')

    await page.fill('#username', username)
    await page.click('#profile-save')
    await idle(page)
    expect(await text(page, '#result-status')).toBe('409')
    expect(await text(page, '#notice-text')).toBe('Username already taken')
    expect(await text(page, '#username-error')).toBe('Username already taken')
    expect(await text(page, '#profile-username')).toBe('not set')
  })

  it('uploads an avatar, which the page shows from the service, and removes it', async () => {
    const { page } = await registeredPage()
    let mark = service.logLines.length
    await page.setInputFiles('#avatar-file', { name: 'me.png', mimeType: 'image/png', buffer: PNG })
    await idle(page)
    expect(await text(page, '#notice-title')).toBe('Avatar uploaded')
    expect(await text(page, '#notice-text')).toBe("me.png is the account's avatar now.")
    const avatar = page.locator('#avatar')
    const src = await avatar.getAttribute('src')
    expect(src).toMatch(new RegExp(`^${base}/avatars/[0-9a-f]{32}$`))
    // loaded, under the page's policy (img-src 'self'), without a token
    await page.waitForFunction("document.getElementById('avatar').complete")
    expect(await page.evaluate("document.getElementById('avatar').naturalWidth")).toBeGreaterThan(0)
    expect(await page.locator('#avatar-initial').isHidden()).toBe(true)
    expect(requestsSince(mark)).toEqual(['POST /auth/avatar 200', `GET ${new URL(src ?? '').pathname} 200`])
    // the input is emptied, so that the same file may be chosen again
    expect(await page.inputValue('#avatar-file')).toBe('')
    await page.screenshot({ path: join(SCREENSHOTS, 'profile-2-avatar.png'), fullPage: true })

    // not an image: the service's message under the input, and the avatar kept
    await page.setInputFiles('#avatar-file', {
      name: 'notes.png',
      mimeType: 'image/png',
      buffer: Buffer.from('hi'),
    })
    await idle(page)
    expect(await text(page, '#result-status')).toBe('415')
    expect(await text(page, '#avatar-file-error')).toBe('The avatar must be a JPEG, PNG or WebP image')
    expect(await avatar.getAttribute('src')).toBe(src)

    mark = service.logLines.length
    await page.click('#avatar-remove')
    await idle(page)
    expect(requestsSince(mark)).toEqual(['DELETE /auth/avatar 200'])
    expect(await text(page, '#notice-title')).toBe('Avatar removed')
    expect(await avatar.isHidden()).toBe(true)
    expect(await page.locator('#avatar-initial').isVisible()).toBe(true)
    expect(await page.locator('#avatar-remove').isHidden()).toBe(true)
    // the button is gone: the keyboard's focus goes to the input
    expect(await page.evaluate('document.activeElement.id')).toBe('avatar-file')
  })
})
