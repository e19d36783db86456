import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { withInjectedFailures } from '../support/failing-stores.js'
import { bearer, call, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

describe.each(backends)('spec 7: errors, DECISIONS wire format and hostile input [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    call(service.app, 'POST', url, { body, headers })

  describe('400: invalid request parameters', () => {
    it('bad e-mail format and password length (see 4.3) carry the field as a JSON Pointer', async () => {
      const reply = await post('/auth/register', { email: 'x', password: PASSWORD })
      expect(reply.body.data.errors[0].field).toBe('/email')
    })

    it.each([
      ['truncated JSON', '{"email": "a@example.com", '],
      ['single quotes', "{'email': 'a@example.com'}"],
      ['a trailing comma', '{"email": "a@example.com",}'],
    ])('malformed body: %s', async (_case, text) => {
      expectError(await post('/auth/login', text), 400, MESSAGES.malformedBody)
    })

    it.each([
      ['an array', '[]'],
      ['a string', '"a@example.com"'],
      ['null', 'null'],
      ['a number', '42'],
    ])('a body that is not an object: %s', async (_case, text) => {
      const reply = await post('/auth/login', text)
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({
        code: 400,
        message: 'Invalid request: body must be an object',
        data: { errors: [{ field: '', message: 'must be an object' }] },
      })
    })

    it('a POST without a body where one is required', async () => {
      const reply = await call(service.app, 'POST', '/auth/register')
      expect(reply.status).toBe(400)
      expect(reply.body.message).toBe('Invalid request: body must be an object')
    })

    it.each([
      ['a number', 12345678, 'must be a string'],
      ['a boolean', true, 'must be a string'],
      ['null', null, 'must be a string'],
      ['an array', ['correct horse'], 'must be a string'],
      ['an object', { value: 'correct horse' }, 'must be a string'],
    ])('no type coercion: %s where a string belongs', async (_case, password, message) => {
      const reply = await post('/auth/register', { email: uniqueEmail(), password })
      expect(reply.status).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field: '/password', message }])
    })

    it.each([
      ['__proto__', '{"__proto__": {"admin": true}, "email": "a@example.com", "password": "correct horse"}'],
      [
        'constructor.prototype',
        '{"constructor": {"prototype": {"admin": true}}, "email": "a@example.com", "password": "x"}',
      ],
    ])('a %s key is refused and changes nothing', async (_case, text) => {
      expectError(await post('/auth/register', text), 400, MESSAGES.malformedBody)
      expect(({} as Record<string, unknown>).admin).toBeUndefined()
    })

    it('unknown fields are ignored', async () => {
      const reply = await post('/auth/register', {
        email: uniqueEmail(),
        password: PASSWORD,
        role: 'admin',
        id: '1',
      })
      expect(reply.status).toBe(200)
    })

    it('SQL in strings is only data', async () => {
      const password = "'); DROP TABLE users; --"
      const email = `o'reilly+${Date.now()}@example.com`
      expect((await post('/auth/register', { email, password })).status).toBe(200)
      expect((await post('/auth/login', { email, password })).status).toBe(200)
      expectError(
        await post('/auth/login', { email, password: "' OR '1'='1" }),
        401,
        MESSAGES.invalidCredentials,
      )
      expect((await registerUser(service.app)).id).toMatch(/^\d{10}$/)
    })
  })

  describe('401: credentials, refresh tokens and the Authorization header', () => {
    it('each condition has its text (details in spec 4 and 5 suites)', async () => {
      const user = await registerUser(service.app)
      expectError(
        await post('/auth/login', { email: user.email, password: 'nope nope' }),
        401,
        MESSAGES.invalidCredentials,
      )
      expectError(await post('/auth/refresh', { refresh_token: 'x.y.z' }), 401, MESSAGES.refreshTokenInvalid)
      expectError(await call(service.app, 'GET', '/auth/me'), 401, MESSAGES.authorizationMissing)
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: { authorization: 'Token x' } }),
        401,
        MESSAGES.authorizationMalformed,
      )
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: bearer('x.y.z') }),
        401,
        MESSAGES.accessTokenInvalid,
      )
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: bearer(user.refreshToken) }),
        401,
        MESSAGES.tokenWrongType,
      )
    })
  })

  describe('409: registration with an e-mail already registered', () => {
    it('answers the envelope', async () => {
      const user = await registerUser(service.app)
      expectError(
        await post('/auth/register', { email: user.email, password: PASSWORD }),
        409,
        MESSAGES.emailTaken,
      )
    })
  })

  describe('500: internal error, on every endpoint', () => {
    let failing = false
    let broken: TestService
    beforeAll(async () => {
      broken = await startTestService(backend, {
        wrapStores: (stores: Stores) => withInjectedFailures(stores, () => failing),
      })
    })
    afterAll(() => broken.close())

    it('a failing store gives a 500 envelope with a generic text, logs the stack, and the process keeps serving', async () => {
      const user = await registerUser(broken.app)
      failing = true
      const replies = [
        await call(broken.app, 'POST', '/auth/register', {
          body: { email: uniqueEmail(), password: PASSWORD },
        }),
        await call(broken.app, 'POST', '/auth/login', { body: { email: user.email, password: PASSWORD } }),
        await call(broken.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
        await call(broken.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) }),
        await call(broken.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) }),
      ]
      failing = false
      for (const reply of replies) {
        expectError(reply, 500, MESSAGES.internal)
        expect(reply.text).not.toContain('secret-host')
      }
      const errors = broken.logs().filter((record) => record.level === 50)
      expect(errors).toHaveLength(5)
      expect((errors[0]?.err as { stack?: string } | undefined)?.stack).toContain('ECONNREFUSED')
      // still serving, and nothing was lost: the account and its token still work
      expect((await call(broken.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })).status).toBe(
        200,
      )
      expect(
        (await call(broken.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }))
          .status,
      ).toBe(200)
    })
  })

  describe('DECISIONS: every error is JSON in the envelope, 404 and 405 included', () => {
    it('404 for an unknown path', async () => {
      expectError(await call(service.app, 'GET', '/nowhere'), 404, MESSAGES.notFound)
      expectError(await call(service.app, 'POST', '/auth/registers', { body: {} }), 404, MESSAGES.notFound)
    })

    it('405 with Allow for a known path and another method', async () => {
      const reply = await call(service.app, 'GET', '/auth/login')
      expectError(reply, 405, MESSAGES.methodNotAllowed)
      expect(reply.headers.allow).toBe('POST')
      const health = await call(service.app, 'DELETE', '/health')
      expectError(health, 405, MESSAGES.methodNotAllowed)
      expect(health.headers.allow).toBe('GET, HEAD')
    })

    it('413 for a body over 16 KiB (20 KiB sent), and nothing is created', async () => {
      const email = uniqueEmail()
      const reply = await post('/auth/register', {
        email,
        password: PASSWORD,
        padding: 'x'.repeat(20 * 1024),
      })
      expectError(reply, 413, MESSAGES.payloadTooLarge)
      expectError(await post('/auth/login', { email, password: PASSWORD }), 401, MESSAGES.invalidCredentials)
    })

    it('415 for a body with another Content-Type', async () => {
      const reply = await post('/auth/login', `email=a@example.com&password=${PASSWORD}`, {
        'content-type': 'application/x-www-form-urlencoded',
      })
      expectError(reply, 415, MESSAGES.unsupportedMediaType)
      expectError(
        await post('/auth/login', '{}', { 'content-type': 'text/plain' }),
        415,
        MESSAGES.unsupportedMediaType,
      )
    })
  })

  describe('limits: Argon2 concurrency and login rate', () => {
    it('past the Argon2 queue a request gets a 503 envelope with Retry-After, and the others succeed', async () => {
      const busy = await startTestService(backend, {
        // one thread admits two computations (one running, one queued in the thread) and one more may wait: of 16
        // logins arriving together, at most 3 are taken; an expensive hash keeps the first ones busy meanwhile
        env: {
          AUTH_HASH_CONCURRENCY: '1',
          AUTH_HASH_QUEUE_LIMIT: '1',
          AUTH_ARGON2_MEMORY_KIB: '65536',
          AUTH_ARGON2_TIME_COST: '2',
        },
      })
      try {
        const user = await registerUser(busy.app)
        const replies = await Promise.all(
          Array.from({ length: 16 }, () =>
            call(busy.app, 'POST', '/auth/login', { body: { email: user.email, password: PASSWORD } }),
          ),
        )
        const ok = replies.filter((reply) => reply.status === 200)
        const refused = replies.filter((reply) => reply.status === 503)
        expect(ok.length).toBeGreaterThanOrEqual(3)
        expect(refused.length).toBeGreaterThanOrEqual(1)
        expect(ok.length + refused.length).toBe(16)
        for (const reply of refused) {
          expectError(reply, 503, MESSAGES.busy)
          expect(reply.headers['retry-after']).toBe('1')
        }
      } finally {
        await busy.close()
      }
    })

    it('RATE_LIMIT_PER_MINUTE limits each public auth endpoint per client address with a 429 envelope', async () => {
      const limited = await startTestService(backend, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
      try {
        const body = { email: uniqueEmail(), password: PASSWORD }
        const statuses = []
        for (let i = 0; i < 3; i++)
          statuses.push((await call(limited.app, 'POST', '/auth/login', { body })).status)
        expect(statuses).toEqual([401, 401, 429])
        const reply = await call(limited.app, 'POST', '/auth/login', { body })
        expectError(reply, 429, MESSAGES.rateLimited)
        expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0)
        // another endpoint keeps its own budget; status endpoints are not limited
        expect((await call(limited.app, 'POST', '/auth/register', { body })).status).toBe(200)
        for (let i = 0; i < 5; i++) expect((await call(limited.app, 'GET', '/health')).status).toBe(200)
      } finally {
        await limited.close()
      }
    })
  })

  describe('DECISIONS: the client address', () => {
    const failedLoginAddress = async (target: TestService, headers: Record<string, string>) => {
      const user = await registerUser(target.app)
      await call(target.app, 'POST', '/auth/login', {
        body: { email: user.email, password: 'wrong pass' },
        headers,
      })
      return target.logs().find((record) => record.event === 'login_failed' && record.userId === user.id)
        ?.clientAddress
    }

    it('is the socket peer: a spoofed X-Forwarded-For changes nothing', async () => {
      expect(await failedLoginAddress(service, { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.1')
    })

    it('is taken from X-Forwarded-For when the peer is a proxy named in TRUST_PROXY', async () => {
      const proxied = await startTestService(backend, { env: { TRUST_PROXY: '127.0.0.1' } })
      try {
        expect(await failedLoginAddress(proxied, { 'x-forwarded-for': '203.0.113.9' })).toBe('203.0.113.9')
      } finally {
        await proxied.close()
      }
    })
  })
})
