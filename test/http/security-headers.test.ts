import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, call, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

// issue 11, "the headers a review checks": src/http/security-headers.ts (docs/api.md R1.11, R1.12, R5.7.3)
describe('security headers', () => {
  let service: TestService
  beforeAll(async () => {
    // the proxy at 127.0.0.1 (app.inject's address) is trusted: X-Forwarded-Proto counts from it
    service = await startTestService(backends[0]!, { env: { TRUST_PROXY: '127.0.0.1' } })
  })
  afterAll(() => service.close())

  /** Every endpoint that takes or gives credentials, with a successful and a refused call each. */
  async function credentialAnswers(): Promise<Array<[string, Reply]>> {
    const email = uniqueEmail()
    const register = await call(service.app, 'POST', '/auth/register', {
      body: { email, password: PASSWORD },
    })
    const login = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    const { access_token: access, refresh_token: refresh } = login.body.data
    return [
      ['register 200', register],
      [
        'register 409',
        await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } }),
      ],
      ['login 200', login],
      [
        'login 401',
        await call(service.app, 'POST', '/auth/login', { body: { email, password: 'wrong one' } }),
      ],
      ['login 400', await call(service.app, 'POST', '/auth/login', { body: {} })],
      ['me 200', await call(service.app, 'GET', '/auth/me', { headers: bearer(access) })],
      ['me 401', await call(service.app, 'GET', '/auth/me')],
      ['refresh 200', await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: refresh } })],
      ['refresh 401', await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: refresh } })],
      [
        'logout 200',
        await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(access) }),
      ],
    ]
  }

  it('R1.11 X-Content-Type-Options: nosniff on every answer: success, error, 404, 405, preflight, documents', async () => {
    const answers: Array<[string, Reply]> = [
      ...(await credentialAnswers()),
      ['health', await call(service.app, 'GET', '/health')],
      ['info', await call(service.app, 'GET', '/info')],
      ['site-config', await call(service.app, 'GET', '/site-config')],
      ['404', await call(service.app, 'GET', '/nowhere')],
      ['405', await call(service.app, 'DELETE', '/auth/login')],
      [
        '415',
        await call(service.app, 'POST', '/auth/login', {
          body: 'x',
          headers: { 'content-type': 'text/plain' },
        }),
      ],
      ['openapi', await call(service.app, 'GET', '/openapi.json')],
      ['docs', await call(service.app, 'GET', '/docs')],
      [
        'preflight',
        await call(service.app, 'OPTIONS', '/auth/login', {
          headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
        }),
      ],
    ]
    for (const [name, reply] of answers) expect(reply.headers['x-content-type-options'], name).toBe('nosniff')
  })

  it('R1.12 Cache-Control: no-store on every answer of register, login, refresh, logout and me, and only there', async () => {
    for (const [name, reply] of await credentialAnswers())
      expect(reply.headers['cache-control'], name).toBe('no-store')
    expect((await call(service.app, 'GET', '/health')).headers['cache-control']).toBeUndefined()
  })

  it('R5.7.3 Strict-Transport-Security: on answers that came over HTTPS, here through the trusted proxy, and no other', async () => {
    const viaProxy = (proto: string, remoteAddress = '127.0.0.1') =>
      service.app.inject({
        method: 'GET',
        url: '/health',
        remoteAddress,
        headers: { 'x-forwarded-proto': proto },
      })
    expect((await viaProxy('https')).headers['strict-transport-security']).toBe('max-age=31536000')
    expect((await viaProxy('http')).headers['strict-transport-security']).toBeUndefined()
    expect((await call(service.app, 'GET', '/health')).headers['strict-transport-security']).toBeUndefined()
    // from a peer that is not a trusted proxy the header counts for nothing
    expect((await viaProxy('https', '192.0.2.1')).headers['strict-transport-security']).toBeUndefined()
    // errors too
    const missing = await service.app.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-forwarded-proto': 'https' },
    })
    expect(missing.headers['strict-transport-security']).toBe('max-age=31536000')
  })
})
