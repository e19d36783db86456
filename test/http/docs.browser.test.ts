import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { chromiumAvailable, launchChromium } from '../support/chromium.js'
import { apiPath, startTestService, type TestService } from '../support/test-service.js'

const available = chromiumAvailable('the browser test of /docs')

describe.skipIf(!available)('GET /docs in a browser', () => {
  let service: TestService
  let browser: Browser
  let base: string
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
    await service.app.listen({ host: '127.0.0.1', port: 0 })
    base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await service?.close()
  })

  it('renders Swagger UI with every operation of the OpenAPI document under its strict CSP, without page errors or CSP violations', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    // a script, style or request the policy blocks is reported on the console (and as a securitypolicyviolation event)
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))",
    )
    const response = await page.goto(`${base}${apiPath('/docs')}`)
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'")
    await page.waitForSelector('.opblock', { timeout: 15_000 })
    const operations = await page.locator('.opblock-summary-path').allInnerTexts()
    const paths = operations.map((text) => text.replace(/\u200b/g, '').trim())
    expect(paths).toEqual(
      expect.arrayContaining([
        '/health',
        '/info',
        '/auth/register',
        '/auth/login',
        '/auth/refresh',
        '/auth/me',
      ]),
    )
    expect(await page.locator('.information-container .title').textContent()).toContain('tessera')
    expect(errors).toEqual([])
  })
})
