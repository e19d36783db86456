import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTokenService } from '../../src/auth/token-service.js'
import { createFixedClock, systemClock } from '../../src/clock.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import {
  bearer,
  call,
  decodeJwt,
  expectError,
  NEW_ACCOUNT_FIELDS,
  PASSWORD,
  registerUser,
  uniqueEmail,
} from '../support/http.js'
import { FIELD_MESSAGES, MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const packageJson = (await import('../../package.json', { with: { type: 'json' } })).default

// docs/api.md section 4: each endpoint's answers. The refresh-token transitions they cause are section 3's.
describe.each(backends)('R4 endpoints [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  /** A token pair, signed with the service's secret, for a user id that has no account. */
  const ghostTokens = () =>
    createTokenService(
      {
        secret: service.config.auth.jwtSecret!,
        previousSecrets: [],
        accessTokenTtlSeconds: 900,
        refreshTokenTtlSeconds: 86_400,
      },
      systemClock,
    ).issuePair('1000000000')

  describe('R4.1 GET /health', () => {
    /** Every configured dependency (database; redis too where configured) as up, with some marked down. */
    const checks = (target: TestService, down: string[] = []) =>
      Object.fromEntries(Object.keys(target.stores.probes).map((name) => [name, !down.includes(name)]))

    it('R4.1.1 200 {status: "ok", checks} with every dependency checked, without the envelope', async () => {
      const reply = await call(service.app, 'GET', '/health')
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ status: 'ok', checks: checks(service) })
      expect(Object.keys(reply.body.checks)).toContain('database')
    })

    it('R4.1.2 503 {status: "unavailable"} naming the dependency that does not answer; 200 again once it does', async () => {
      let down = false
      const flaky = await startTestService(backend, {
        wrapStores: (stores: Stores) => ({
          ...stores,
          probes: {
            ...stores.probes,
            database: () =>
              down ? Promise.reject(new Error('connection refused')) : stores.probes.database!(),
          },
        }),
      })
      try {
        down = true
        const reply = await call(flaky.app, 'GET', '/health')
        expect(reply.status).toBe(503)
        expect(reply.body).toEqual({ status: 'unavailable', checks: checks(flaky, ['database']) })
        down = false
        expect((await call(flaky.app, 'GET', '/health')).status).toBe(200)
      } finally {
        await flaky.close()
      }
    })

    it('R4.1.3 never hangs: a probe that does not answer counts as down after HEALTH_TIMEOUT_MS', async () => {
      const hanging = await startTestService(backend, {
        env: { HEALTH_TIMEOUT_MS: '50' },
        // the other probes answer at once: a real Redis probe can take over 50 ms on a loaded machine, and this
        // test is about the one that never answers
        wrapStores: (stores: Stores) => ({
          ...stores,
          probes: {
            ...Object.fromEntries(Object.keys(stores.probes).map((name) => [name, () => Promise.resolve()])),
            database: () => new Promise(() => {}),
          },
        }),
      })
      try {
        const reply = await call(hanging.app, 'GET', '/health')
        expect(reply.status).toBe(503)
        expect(reply.body.checks).toEqual(checks(hanging, ['database']))
      } finally {
        await hanging.close()
      }
    })
    it('R4.1.4 requests that arrive together share one check of each dependency; a later request checks again', async () => {
      const asked: string[] = []
      let answered = 0
      const counted = await startTestService(backend, {
        wrapStores: (stores: Stores) => ({
          ...stores,
          probes: Object.fromEntries(
            Object.entries(stores.probes).map(([name, probe]) => [
              name,
              async () => {
                asked.push(`${name} after ${answered}`)
                await probe()
              },
            ]),
          ),
        }),
      })
      try {
        const names = Object.keys(counted.stores.probes)
        const together = await Promise.all(
          Array.from({ length: 10 }, () => call(counted.app, 'GET', '/health')),
        )
        answered = together.length
        expect(together.map((reply) => reply.status)).toEqual(Array(10).fill(200))
        expect(asked).toEqual(names.map((name) => `${name} after 0`))
        // a request after those answered is not answered from their check
        expect((await call(counted.app, 'GET', '/health')).status).toBe(200)
        expect(asked).toEqual([
          ...names.map((name) => `${name} after 0`),
          ...names.map((name) => `${name} after 10`),
        ])
      } finally {
        await counted.close()
      }
    })
  })

  describe('R4.2 GET /info', () => {
    it('R4.2.1 200 with name and version of the package, status "running" and the Unix time in seconds, without the envelope', async () => {
      const clock = createFixedClock(Date.UTC(2026, 10, 20, 8, 15, 30, 123))
      const fixed = await startTestService(backend, { clock })
      try {
        const reply = await call(fixed.app, 'GET', '/info')
        expect(reply.status).toBe(200)
        expect(reply.body).toEqual({
          name: packageJson.name,
          version: packageJson.version,
          status: 'running',
          timestamp: Date.UTC(2026, 10, 20, 8, 15, 30) / 1000,
        })
      } finally {
        await fixed.close()
      }
    })
  })

  describe('R4.3 POST /auth/register', () => {
    const register = (body: unknown) => call(service.app, 'POST', '/auth/register', { body })

    it('R4.3.1 200 with data {email, created_at, access_token, refresh_token} (and the other account fields of §2.1): created and logged in at once', async () => {
      const email = uniqueEmail()
      const reply = await register({ email, password: PASSWORD })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: {
          id: expect.stringMatching(/^[1-9]\d{9}$/),
          email,
          ...NEW_ACCOUNT_FIELDS,
          created_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
          access_token: expect.any(String),
          refresh_token: expect.any(String),
        },
      })
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(reply.body.data.access_token) })
      expect(me.status).toBe(200)
      expect(me.body.data.email).toBe(email)
    })

    it('R4.3.2 409 for an e-mail already registered, the account unchanged; of concurrent registrations one succeeds', async () => {
      const user = await registerUser(service.app)
      expectError(
        await register({ email: user.email, password: 'another password' }),
        409,
        MESSAGES.emailTaken,
      )
      const login = await call(service.app, 'POST', '/auth/login', {
        body: { email: user.email, password: PASSWORD },
      })
      expect(login.status).toBe(200)
      expect(login.body.data.id).toBe(user.id)

      const email = uniqueEmail()
      const replies = await Promise.all([1, 2, 3].map(() => register({ email, password: PASSWORD })))
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409])
    })
  })

  describe('R4.4 POST /auth/login', () => {
    const login = (body: unknown) => call(service.app, 'POST', '/auth/login', { body })

    it('R4.4.1 200 with data {id, email, created_at, access_token, refresh_token} and the other account fields of §2.1', async () => {
      const email = uniqueEmail()
      const registered = await call(service.app, 'POST', '/auth/register', {
        body: { email, password: PASSWORD },
      })
      const reply = await login({ email, password: PASSWORD })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: {
          id: expect.stringMatching(/^[1-9]\d{9}$/),
          email,
          ...NEW_ACCOUNT_FIELDS,
          created_at: registered.body.data.created_at,
          updated_at: registered.body.data.created_at,
          access_token: expect.any(String),
          refresh_token: expect.any(String),
        },
      })
      expect(decodeJwt(reply.body.data.access_token).claims.sub).toBe(reply.body.data.id)
    })

    it.each([
      ['a missing password', { email: 'a@example.com' }, '/password', FIELD_MESSAGES.required],
      ['a missing e-mail', { password: PASSWORD }, '/email', FIELD_MESSAGES.required],
      [
        'a numeric password',
        { email: 'a@example.com', password: 12345678 },
        '/password',
        FIELD_MESSAGES.notString,
      ],
      ['an empty password', { email: 'a@example.com', password: '' }, '/password', FIELD_MESSAGES.empty],
      [
        'a password of 101 characters',
        { email: 'a@example.com', password: 'a'.repeat(101) },
        '/password',
        FIELD_MESSAGES.loginPassword,
      ],
      [
        'a password with a lone surrogate',
        { email: 'a@example.com', password: 'abcdefgh\ud800' },
        '/password',
        FIELD_MESSAGES.loginPassword,
      ],
      [
        'an e-mail that is not valid',
        { email: 'nope', password: PASSWORD },
        '/email',
        FIELD_MESSAGES.invalidEmail,
      ],
    ])('R4.4.2 400 for %s', async (_case, body, field, message) => {
      const reply = await login(body)
      expect(reply.status).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message }])
    })

    it('R4.4.3 a wrong e-mail and a wrong password get the same 401: status, body and headers', async () => {
      const user = await registerUser(service.app)
      const wrongPassword = await login({ email: user.email, password: 'wrong password' })
      const wrongEmail = await login({ email: uniqueEmail(), password: PASSWORD })
      expectError(wrongPassword, 401, MESSAGES.invalidCredentials)
      expectError(wrongEmail, 401, MESSAGES.invalidCredentials)
      expect(wrongEmail.text).toBe(wrongPassword.text)
      expect(Object.keys(wrongEmail.headers).sort()).toEqual(Object.keys(wrongPassword.headers).sort())
    })

    it('R4.4.4 every failed login is logged with its reason and the client address, never the password', async () => {
      const user = await registerUser(service.app)
      const unknown = uniqueEmail()
      await login({ email: user.email, password: 'wrong password 3' })
      await login({ email: unknown, password: 'wrong password 4' })
      const failures = service
        .logs()
        .filter((record) => record.event === 'login_failed' && record.level === 40)
      expect(failures.find((record) => record.userId === user.id)).toMatchObject({
        reason: 'wrong_password',
        clientAddress: '127.0.0.1',
        msg: 'login failed',
      })
      expect(failures.some((record) => record.reason === 'unknown_email')).toBe(true)
      const logged = service.logLines.join('\n')
      expect(logged).not.toContain('wrong password 3')
      expect(logged).not.toContain('wrong password 4')
    })
  })

  describe('R4.5 POST /auth/refresh', () => {
    const refresh = (body: unknown) => call(service.app, 'POST', '/auth/refresh', { body })

    it('R4.5.1 200 with data {access_token, refresh_token}: a new pair', async () => {
      const user = await registerUser(service.app)
      const reply = await refresh({ refresh_token: user.refreshToken })
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: { access_token: expect.any(String), refresh_token: expect.any(String) },
      })
      expect(reply.body.data.access_token).not.toBe(user.accessToken)
    })

    it.each([
      ['a missing refresh_token', {}, '/refresh_token', FIELD_MESSAGES.required],
      ['a numeric refresh_token', { refresh_token: 42 }, '/refresh_token', FIELD_MESSAGES.notString],
      ['an empty refresh_token', { refresh_token: '' }, '/refresh_token', FIELD_MESSAGES.empty],
      [
        'a refresh_token of 4,097 characters',
        { refresh_token: 'a'.repeat(4097) },
        '/refresh_token',
        FIELD_MESSAGES.refreshTokenTooLong,
      ],
    ])('R4.5.2 400 for %s', async (_case, body, field, message) => {
      const reply = await refresh(body)
      expect(reply.status).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message }])
    })

    // expired (R3.6), already used (R3.7), replaced by a login (R3.2) and logged out (R3.5) are tested there
    it('R4.5.3 401 for a token that is forged, not a JWT, an access token, or of no account, each with its message', async () => {
      const user = await registerUser(service.app)
      const [header, claims, signature = ''] = user.refreshToken.split('.')
      const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`
      for (const bad of [`${header}.${claims}.${flipped}`, 'x.y.z', ghostTokens().refreshToken]) {
        expectError(await refresh({ refresh_token: bad }), 401, MESSAGES.refreshTokenInvalid)
      }
      expectError(await refresh({ refresh_token: user.accessToken }), 401, MESSAGES.tokenWrongType)
    })
  })

  describe('R4.6 POST /auth/delete-refresh-token (logout)', () => {
    const logout = (accessToken: string) =>
      call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(accessToken) })

    it('R4.6.1 200 {code: 200, message: "Success", data: null}; only the caller\'s refresh token goes, and again 200', async () => {
      const alice = await registerUser(service.app)
      const bob = await registerUser(service.app)
      const reply = await logout(alice.accessToken)
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ code: 200, message: 'Success', data: null })
      const bobRefresh = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: bob.refreshToken },
      })
      expect(bobRefresh.status).toBe(200)
      expect((await logout(alice.accessToken)).body).toEqual({ code: 200, message: 'Success', data: null })
    })

    it('R4.6.2 takes no body: none, or an empty one with or without a JSON Content-Type; a JSON body is ignored', async () => {
      const user = await registerUser(service.app)
      const withType = await service.app.inject({
        method: 'POST',
        url: '/auth/delete-refresh-token',
        headers: { ...bearer(user.accessToken), 'content-type': 'application/json' },
        payload: '',
      })
      const withoutType = await service.app.inject({
        method: 'POST',
        url: '/auth/delete-refresh-token',
        headers: bearer(user.accessToken),
      })
      const withJson = await call(service.app, 'POST', '/auth/delete-refresh-token', {
        headers: bearer(user.accessToken),
        body: { user_id: '1000000000' },
      })
      expect(withType.statusCode).toBe(200)
      expect(withoutType.statusCode).toBe(200)
      expect(withJson.status).toBe(200)
    })
  })

  describe('R4.7 GET /auth/me', () => {
    it("R4.7.1 200 with data the caller's account, every field of §2.1", async () => {
      const user = await registerUser(service.app)
      const reply = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: {
          id: user.id,
          email: user.email,
          ...NEW_ACCOUNT_FIELDS,
          created_at: user.createdAt,
          updated_at: user.createdAt,
        },
      })
    })

    it('R4.7.2 401 for a valid access token whose sub names no account', async () => {
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: bearer(ghostTokens().accessToken) }),
        401,
        MESSAGES.accessTokenInvalid,
      )
    })
  })
})
