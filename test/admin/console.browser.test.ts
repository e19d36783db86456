import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Secret, TOTP } from 'otpauth'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { bearer, call, PASSWORD } from '../support/http.js'
import { freePort } from '../support/redis-server.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md §4.28: the admin console in Chromium, against the real service on SQLite: an admin with an
// authenticator app signs in through the page (its code computed by otpauth), finds an account by a prefix of its
// address, page by page, disables it after confirming (that account's refresh token is then refused: a real
// POST /auth/refresh), and reads the act in the audit trail; the other acts, each confirmed; and the readable
// refusals of an account that is no admin and of an admin without a second factor.

const available = chromiumAvailable('the browser tests of the admin console on /admin')

/** Where the screenshots go (outside the repository): look at them after a change to the page. */
const SCREENSHOTS = process.env.ADMIN_SCREENSHOTS ?? join(tmpdir(), 'tessera-admin-screenshots')
const ADMIN_ROLE = 'tessera-admin'
/** The accounts the search finds: more than one page of 10. */
const FOUND = 12
const tag = `${process.pid}-${Date.now().toString(36)}`

/** An account registered through the API: its address, id and the tokens of its session. */
interface Account {
  email: string
  id: string
  accessToken: string
  refreshToken: string
}

describe.skipIf(!available)('the admin console', () => {
  let service: TestService
  let origin: string
  let browser: Browser
  let context: BrowserContext
  /** Page errors, console errors and CSP violations of the page. */
  let problems: string[]
  /** The URLs the page has requested of the admin API, query strings included (the log has only the paths). */
  let sent: string[]
  let admin: Account
  let totp: TOTP
  /** The admin's recovery codes not used yet. */
  let recoveryCodes: string[]
  /** The accounts `find-<tag>-01` to `-12`. */
  const found: Account[] = []

  const api = (method: string, url: string, options: Parameters<typeof call>[3] = {}) =>
    call(service.app, method, url, options)

  async function register(email: string): Promise<Account> {
    const reply = await api('POST', '/auth/register', { body: { email, password: PASSWORD } })
    expect(reply.status, reply.text).toBe(200)
    const { id, access_token: accessToken, refresh_token: refreshToken } = reply.body.data
    return { email, id, accessToken, refreshToken }
  }

  /** Gives the account the admin role, as `tessera users set-role` does, in the store. */
  async function makeAdmin(account: Account) {
    expect(await service.stores.users.setRole(account.id, ADMIN_ROLE, new Date().toISOString())).toBe(true)
  }

  /** A real POST /auth/refresh over HTTP: its status, and the new refresh token when it succeeded. */
  async function refresh(refreshToken: string): Promise<{ status: number; refreshToken?: string }> {
    const response = await fetch(`${origin}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    })
    const body = (await response.json()) as { data: { refresh_token?: string } | null }
    return { status: response.status, refreshToken: body.data?.refresh_token }
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true })
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    service = await startTestService(backends[0]!)
    await service.app.listen({ host: '127.0.0.1', port })
    browser = await launchChromium()

    // the admin: a verified address (a factor needs one), an authenticator app enrolled through the API, the role
    admin = await register(`admin-${tag}@example.com`)
    expect(await service.stores.users.markEmailVerified(admin.id)).toBe(true)
    const setup = await api('POST', '/auth/mfa/totp/setup', {
      headers: bearer(admin.accessToken),
      body: { password: PASSWORD },
    })
    expect(setup.status, setup.text).toBe(200)
    totp = new TOTP({ secret: Secret.fromBase32(setup.body.data.secret), digits: 6, period: 30 })
    const confirmed = await api('POST', '/auth/mfa/totp/confirm', {
      headers: bearer(admin.accessToken),
      body: { factor_id: setup.body.data.factor_id, code: totp.generate() },
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    recoveryCodes = confirmed.body.data.recovery_codes
    await makeAdmin(admin)

    for (let n = 1; n <= FOUND; n++)
      found.push(await register(`find-${tag}-${String(n).padStart(2, '0')}@example.com`))
  })
  afterAll(async () => {
    await browser?.close()
    await service?.close()
  })
  afterEach(async () => {
    await context?.close()
    expect(problems).toEqual([])
  })

  async function openConsole(): Promise<Page> {
    problems = []
    context = await browser.newContext({ viewport: { width: 1200, height: 1000 }, locale: 'en-GB' })
    await context.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))",
    )
    const page = await context.newPage()
    sent = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname.startsWith('/admin/') && !url.pathname.startsWith('/admin/assets/'))
        sent.push(`${request.method()} ${url.pathname}${url.search}`)
    })
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      // Chromium reports every 4xx answer to fetch on the console; the page shows them itself
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        problems.push(message.text())
    })
    await page.goto(`${origin}/admin`)
    await idle(page)
    return page
  }

  /** Waits until the page's act has finished. */
  const idle = (page: Page) => page.locator('body[aria-busy="false"]').waitFor()
  const text = (page: Page, selector: string) => page.locator(selector).innerText()
  const visible = (page: Page, selector: string) => page.locator(selector).isVisible()

  async function click(page: Page, selector: string) {
    await page.click(selector)
    await idle(page)
  }

  /** The request lines the service has logged since `mark` (a count of log lines). */
  function requestsSince(mark: number) {
    return service.logLines
      .slice(mark)
      .map((line) => JSON.parse(line) as { msg: string; method: string; path: string; statusCode: number })
      .filter((record) => record.msg === 'request')
      .map((record) => `${record.method} ${record.path} ${record.statusCode}`)
  }

  async function signIn(page: Page, email: string) {
    await page.fill('#sign-in-email', email)
    await page.fill('#sign-in-password', PASSWORD)
    await click(page, '#sign-in-submit')
  }

  /**
   * Signs the admin in: the password, then the second step. The app's code is the next time step's (the enrolment
   * used this one's, and a code is good once), so only one sign-in in 30 s can take it: the others take a recovery
   * code each.
   */
  async function signInAsAdmin(page: Page, proof: 'app' | 'recovery code') {
    await signIn(page, admin.email)
    expect(await visible(page, '#second-step-form')).toBe(true)
    expect(await visible(page, '#password-form')).toBe(false)
    expect(await text(page, '#second-step-label')).toBe('Code from the authenticator app')
    if (proof === 'app') {
      await page.fill('#second-step-code', totp.generate({ timestamp: Date.now() + 30_000 }))
    } else {
      await page.click('#second-step-switch')
      expect(await text(page, '#second-step-label')).toBe('Recovery code')
      await page.fill('#second-step-code', recoveryCodes.pop() as string)
    }
    await click(page, '#second-step-submit')
    expect(await text(page, '#who')).toBe(`Signed in as ${admin.email}`)
  }

  /** The addresses of the accounts the table lists. */
  const listed = (page: Page) => page.locator('#users-table tbody .open-account').allInnerTexts()

  async function search(page: Page, query: string, perPage = '25') {
    await page.fill('#search-query', query)
    await page.selectOption('#search-limit', perPage)
    await click(page, '#search-submit')
  }

  /** Opens the account of `email` from a search for its whole address; its title is `title`. */
  async function openAccount(page: Page, email: string, title = email) {
    await search(page, email)
    expect(await listed(page)).toEqual([email])
    await click(page, '#users-table tbody .open-account')
    expect(await text(page, '#account-title')).toBe(title)
  }

  it('signs an admin in with the second factor, finds an account, disables it and reads the audit trail', async () => {
    const page = await openConsole()
    expect(await visible(page, '#sign-in')).toBe(true)
    expect(await visible(page, '#console')).toBe(false)
    await signInAsAdmin(page, 'app')
    expect(await visible(page, '#accounts')).toBe(true)
    // the console's session is the tab's: in sessionStorage, under a key of its own
    expect(await page.evaluate("sessionStorage.getItem('tessera.admin.tokens') !== null")).toBe(true)
    expect(await page.evaluate("localStorage.getItem('tessera.tokens')")).toBeNull()
    // a reload of the tab keeps its session: no sign-in again
    await page.reload()
    await idle(page)
    expect(await text(page, '#who')).toBe(`Signed in as ${admin.email}`)
    expect(await visible(page, '#accounts')).toBe(true)

    // a prefix of the addresses: twelve accounts, ten on the first page, two on the next
    let mark = service.logLines.length
    await search(page, `FIND-${tag}-`, '10')
    expect(requestsSince(mark)).toEqual(['GET /admin/users 200'])
    // sent as typed: the service matches the prefix whatever its case
    expect(sent.at(-1)).toBe(`GET /admin/users?query=FIND-${tag}-&limit=10`)
    const first = await listed(page)
    expect(first).toHaveLength(10)
    expect(await text(page, '#users-page')).toBe('Page 1')
    expect(await page.isDisabled('#users-previous')).toBe(true)
    await click(page, '#users-next')
    expect(sent.at(-1)).toMatch(new RegExp(`^GET /admin/users\\?query=FIND-${tag}-&limit=10&after=.+`))
    const second = await listed(page)
    expect(second).toHaveLength(2)
    expect(await page.isDisabled('#users-next')).toBe(true)
    expect([...first, ...second].sort()).toEqual(found.map((account) => account.email).sort())
    await click(page, '#users-previous')
    expect(await listed(page)).toEqual(first)
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-1-search.png'), fullPage: true })

    // the account, with its one session (its registration's)
    const victim = found[6] as Account
    // its refresh token works before: the refusal below is the disable's
    const before = await refresh(victim.refreshToken)
    expect(before.status).toBe(200)
    await openAccount(page, victim.email)
    expect(await page.locator('#sessions-table tbody tr').count()).toBe(1)
    expect(await visible(page, '#factors-empty')).toBe(true)
    expect(await text(page, '#account-facts')).toContain(victim.id)

    // cancelled, nothing is sent
    mark = service.logLines.length
    await page.click('#account-disable')
    expect(await visible(page, '#confirm')).toBe(true)
    expect(await text(page, '#confirm-title')).toBe(`Disable ${victim.email}?`)
    expect(await text(page, '#confirm-text')).toBe(
      'It cannot sign in or refresh its tokens until an admin enables it again, and its session ends now.',
    )
    expect(await text(page, '#confirm-ok')).toBe('Disable')
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-2-confirm.png'), fullPage: true })
    await click(page, '#confirm-cancel')
    expect(await visible(page, '#confirm')).toBe(false)
    expect(requestsSince(mark)).toEqual([])

    // confirmed, the account is disabled and its session ends
    await page.click('#account-disable')
    await click(page, '#confirm-ok')
    expect(requestsSince(mark)).toEqual([
      `PUT /admin/users/${victim.id} 200`,
      `GET /admin/users/${victim.id} 200`,
    ])
    expect(await text(page, '#notice-title')).toBe('Account disabled')
    expect(await text(page, '#notice-text')).toBe(`${victim.email} is disabled; 1 session ended.`)
    expect(await text(page, '#account-facts')).toContain('disabled')
    expect(await visible(page, '#account-disable')).toBe(false)
    expect(await visible(page, '#account-enable')).toBe(true)
    expect(await visible(page, '#sessions-empty')).toBe(true)
    expect((await refresh(before.refreshToken as string)).status).toBe(401)

    // the audit trail: the disable, by this admin
    await service.flushAudit()
    await click(page, '#show-audit')
    expect(await visible(page, '#audit')).toBe(true)
    await page.fill('#audit-user', victim.id)
    await page.fill('#audit-kind', 'account_disabled')
    mark = service.logLines.length
    await click(page, '#audit-submit')
    expect(requestsSince(mark)).toEqual(['GET /admin/audit 200'])
    expect(sent.at(-1)).toBe(`GET /admin/audit?user=${victim.id}&kind=account_disabled&limit=50`)
    const rows = page.locator('#audit-table tbody tr')
    expect(await rows.count()).toBe(1)
    // time, kind, account, reason, client address, acting admin
    const [, kind, account, reason, , actor] = await rows.first().locator('td').allInnerTexts()
    expect([kind, account, reason, actor]).toEqual(['account_disabled', victim.id, 'admin', admin.id])
    await page.screenshot({ path: join(SCREENSHOTS, 'admin-3-audit.png'), fullPage: true })

    // without filters, the admin's act is among the newest events; a time after it shows none
    await click(page, '#audit-clear')
    expect(await page.locator('#audit-table tbody tr').count()).toBeGreaterThan(1)
    await page.fill('#audit-user', victim.id)
    await page.fill('#audit-since', '2999-01-01T00:00')
    await click(page, '#audit-submit')
    expect(await visible(page, '#audit-empty')).toBe(true)

    // from the trail back to the account, enabled again (no confirmation: nothing is lost)
    await page.fill('#audit-since', '')
    await click(page, '#audit-submit')
    await page.locator('#audit-table tbody .open-account').first().click()
    await idle(page)
    expect(await text(page, '#account-title')).toBe(victim.email)
    await click(page, '#account-enable')
    expect(await text(page, '#notice-title')).toBe('Account enabled')
    expect(await visible(page, '#account-disable')).toBe(true)
  })

  it('ends the sessions, changes the role and deletes an account, each confirmed', async () => {
    const page = await openConsole()
    await signInAsAdmin(page, 'recovery code')
    const target = found[2] as Account
    // what an account says of itself is shown as text, never run as HTML
    const nickname = '<img src=x onerror="window.pwned=1">'
    const profile = await api('PUT', '/auth/profile', {
      headers: bearer(target.accessToken),
      body: { nickname },
    })
    expect(profile.status, profile.text).toBe(200)

    await openAccount(page, target.email)
    expect(await text(page, '#account-facts')).toContain(nickname)
    expect(await page.locator('#account-facts img').count()).toBe(0)
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    await page.click('#account-revoke')
    expect(await text(page, '#confirm-title')).toBe(`End every session of ${target.email}?`)
    await click(page, '#confirm-ok')
    expect(await text(page, '#notice-text')).toBe('1 session ended.')
    expect((await refresh(target.refreshToken)).status).toBe(401)

    await page.fill('#role-input', 'support')
    await page.click('#role-submit')
    expect(await text(page, '#confirm-title')).toBe(`Change the role of ${target.email}?`)
    expect(await text(page, '#confirm-text')).toContain('From user to support.')
    await click(page, '#confirm-ok')
    expect(await text(page, '#notice-title')).toBe('Role changed')
    expect((await service.stores.users.findById(target.id))?.role).toBe('support')

    // a refused role is explained, and changes nothing
    await page.fill('#role-input', 'Not A Role!')
    await page.click('#role-submit')
    await click(page, '#confirm-ok')
    expect(await text(page, '#notice-title')).toBe('Changing the role failed')
    expect((await service.stores.users.findById(target.id))?.role).toBe('support')

    // the deletion waits for the address to be typed
    await page.click('#account-delete')
    expect(await page.isDisabled('#confirm-ok')).toBe(true)
    await page.fill('#confirm-typed', 'someone-else@example.com')
    expect(await page.isDisabled('#confirm-ok')).toBe(true)
    await page.fill('#confirm-typed', target.email)
    expect(await page.isEnabled('#confirm-ok')).toBe(true)
    await click(page, '#confirm-ok')
    expect(await text(page, '#notice-title')).toBe('Account deleted')
    expect(await visible(page, '#accounts')).toBe(true)
    expect(await service.stores.users.findById(target.id)).toBeNull()
    found.splice(2, 1)

    // the admin's own account: the API refuses to disable it, and the page says why
    await openAccount(page, admin.email, `${admin.email} (you)`)
    await page.click('#account-disable')
    await click(page, '#confirm-ok')
    expect(await text(page, '#notice-title')).toBe('Disabling the account failed')
    expect((await service.stores.users.findById(admin.id))?.status).toBe('active')
  })

  it('tells an account that is no admin so, and an admin without a second factor what to do', async () => {
    const page = await openConsole()
    const user = await register(`user-${tag}@example.com`)
    await signIn(page, user.email)
    expect(await text(page, '#notice-title')).toBe('Not an admin')
    expect(await text(page, '#notice-text')).toContain('not an admin')
    expect(await visible(page, '#sign-in')).toBe(true)
    expect(await visible(page, '#console')).toBe(false)
    // the console's session was ended, not left behind
    expect(await page.evaluate("sessionStorage.getItem('tessera.admin.tokens')")).toBeNull()

    const plain = await register(`plain-admin-${tag}@example.com`)
    await makeAdmin(plain)
    await signIn(page, plain.email)
    expect(await text(page, '#notice-title')).toBe('Second factor required')
    expect(await text(page, '#notice-text')).toContain('Add an authenticator app')
    expect(await visible(page, '#sign-in')).toBe(true)

    // a wrong password is the service's refusal, in its words
    await page.fill('#sign-in-email', admin.email)
    await page.fill('#sign-in-password', 'not the password')
    await click(page, '#sign-in-submit')
    expect(await text(page, '#notice-title')).toBe('Signing in failed')
    expect(await visible(page, '#password-form')).toBe(true)
  })
})
