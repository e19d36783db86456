import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, expectError, PASSWORD, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md R1.2, R1.9 and R1.10: the errors src/http/error-handler.ts makes of Fastify's own (body too large, no
// route, a path that cannot be decoded) and of an OPTIONS request that is no preflight. Those of Node's HTTP parser:
// test/hostile/parser-errors.test.ts; the log lines of expected refusals: test/hostile/log-flood.test.ts.
describe('error-handler: Fastify errors and unknown routes as envelopes', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  it('R1.9 a body over 16 KiB (20 KiB sent) is a 413, and nothing is created', async () => {
    const email = uniqueEmail()
    const reply = await call(service.app, 'POST', '/auth/register', {
      body: { email, password: PASSWORD, padding: 'x'.repeat(20 * 1024) },
    })
    expectError(reply, 413, MESSAGES.payloadTooLarge)
    expectError(
      await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } }),
      401,
      MESSAGES.invalidCredentials,
    )
  })

  it('R1.10 an unknown path is a 404; a known path with another method a 405 with Allow', async () => {
    expectError(await call(service.app, 'GET', '/nowhere'), 404, MESSAGES.notFound)
    expectError(await call(service.app, 'POST', '/auth/registers', { body: {} }), 404, MESSAGES.notFound)
    const login = await call(service.app, 'GET', '/auth/login')
    expectError(login, 405, MESSAGES.methodNotAllowed)
    expect(login.headers.allow).toBe('POST')
    const health = await call(service.app, 'DELETE', '/health')
    expectError(health, 405, MESSAGES.methodNotAllowed)
    expect(health.headers.allow).toBe('GET, HEAD')
  })

  it('R1.14 an OPTIONS request that is no CORS preflight is a 405 (with Allow) or a 404 envelope', async () => {
    const withoutOrigin = await call(service.app, 'OPTIONS', '/health')
    expectError(withoutOrigin, 405, MESSAGES.methodNotAllowed)
    expect(withoutOrigin.headers.allow).toBe('GET, HEAD')
    expectError(await call(service.app, 'OPTIONS', '/nowhere'), 404, MESSAGES.notFound)
    // an Origin alone does not make a preflight: Access-Control-Request-Method does
    const originOnly = await call(service.app, 'OPTIONS', '/auth/login', {
      headers: { origin: 'https://app.example' },
    })
    expectError(originOnly, 405, MESSAGES.methodNotAllowed)
    expect(originOnly.headers.allow).toBe('POST')
    // a preflight is still answered by CORS (R5.8.1)
    const preflight = await call(service.app, 'OPTIONS', '/auth/login', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example')
  })

  it('R1.13 a path with broken percent-encoding (a Fastify framework error) is a 400 envelope', async () => {
    const badPath = await call(service.app, 'GET', '/auth/%zz')
    expectError(badPath, 400, 'Bad Request')
    expect(badPath.headers['x-content-type-options']).toBe('nosniff')
    expectError(await call(service.app, 'POST', '/auth/login%', { body: {} }), 400, 'Bad Request')
  })
})
