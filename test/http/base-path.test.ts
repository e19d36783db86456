import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, call, expectError, PASSWORD, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

const backend = backends[0]!

// docs/api.md R1.15: BASE_PATH puts every route under one prefix (the whole suites run so in the project base-path)
describe('R1.15 BASE_PATH serves every endpoint, the API document and /docs under its prefix', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend, { env: { BASE_PATH: '/tessera/v1/', API_DOCS: 'true' } })
  })
  afterAll(async () => {
    await service?.close()
  })

  it('answers the specification paths under the prefix, and nothing at the paths without it', async () => {
    expect((await call(service.app, 'GET', '/tessera/v1/health')).status).toBe(200)
    expect((await call(service.app, 'GET', '/tessera/v1/info')).body.status).toBe('running')
    expectError(await call(service.app, 'GET', '/health'), 404, 'Not found')
    expectError(await call(service.app, 'GET', '/tessera/v1'), 404, 'Not found')
    expectError(await call(service.app, 'GET', '/tessera/health'), 404, 'Not found')
    expectError(await call(service.app, 'GET', '/openapi.json'), 404, 'Not found')
    // a known path under the prefix with another method is still a 405, not a 404
    expectError(await call(service.app, 'DELETE', '/tessera/v1/health'), 405, 'Method not allowed')
  })

  it('runs a whole session under the prefix', async () => {
    const email = uniqueEmail()
    const registered = await call(service.app, 'POST', '/tessera/v1/auth/register', {
      body: { email, password: PASSWORD },
    })
    expect(registered.status, registered.text).toBe(200)
    const me = await call(service.app, 'GET', '/tessera/v1/auth/me', {
      headers: bearer(registered.body.data.access_token),
    })
    expect(me.body.data.email).toBe(email)
    const refreshed = await call(service.app, 'POST', '/tessera/v1/auth/refresh', {
      body: { refresh_token: registered.body.data.refresh_token },
    })
    expect(refreshed.status, refreshed.text).toBe(200)
    expect(refreshed.headers['cache-control']).toBe('no-store')
    const logout = await call(service.app, 'POST', '/tessera/v1/auth/delete-refresh-token', {
      headers: bearer(refreshed.body.data.access_token),
    })
    expect(logout.status, logout.text).toBe(200)
  })

  it('documents the paths as the specification names them, with the prefix as the server', async () => {
    const document = (await call(service.app, 'GET', '/tessera/v1/openapi.json')).body
    expect(document.servers).toEqual([{ url: '/tessera/v1' }])
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/health', '/auth/login', '/auth/me']),
    )
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/tessera'))).toEqual([])
  })

  it('serves /docs under the prefix, its page linking its own files and the document there', async () => {
    const page = await call(service.app, 'GET', '/tessera/v1/docs')
    expect(page.status).toBe(200)
    const links = [...page.text.matchAll(/(?:src|href)="(\/[^"]*)"/g)].map((match) => match[1])
    expect(links.length).toBeGreaterThan(0)
    for (const link of links) {
      expect(link).toMatch(/^\/tessera\/v1\/docs\//)
      expect((await call(service.app, 'GET', link!)).status, link).toBe(200)
    }
    const json = await call(service.app, 'GET', '/tessera/v1/docs/json')
    expect(json.text).toBe((await call(service.app, 'GET', '/tessera/v1/openapi.json')).text)
  })

  it('serves the demo page under the prefix', async () => {
    const page = await call(service.app, 'GET', '/tessera/v1/demo')
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
  })
})

describe('R1.15 without BASE_PATH', () => {
  it('documents the server as the root', async () => {
    const service = await startTestService(backend, { env: { BASE_PATH: '', API_DOCS: 'true' } })
    try {
      expect((await call(service.app, 'GET', '/openapi.json')).body.servers).toEqual([{ url: '/' }])
      expect((await call(service.app, 'GET', '/health')).status).toBe(200)
    } finally {
      await service.close()
    }
  })
})
