import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import type { Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const packageJson = (await import('../../package.json', { with: { type: 'json' } })).default

describe.each(backends)('spec 4: endpoints [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  describe('4.1 GET /health', () => {
    /** Every configured dependency (database; redis too where configured) as up, with some marked down. */
    const checks = (target: TestService, down: string[] = []) =>
      Object.fromEntries(Object.keys(target.stores.probes).map((name) => [name, !down.includes(name)]))

    it('200 {status: "ok"} with every dependency checked', async () => {
      const reply = await call(service.app, 'GET', '/health')
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ status: 'ok', checks: checks(service) })
      expect(Object.keys(reply.body.checks)).toContain('database')
    })

    it('503 {status: "unavailable"} naming the dependency that does not answer (DECISIONS)', async () => {
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

    it('never hangs: a probe that does not answer counts as down after HEALTH_TIMEOUT_MS', async () => {
      const hanging = await startTestService(backend, {
        env: { HEALTH_TIMEOUT_MS: '50' },
        wrapStores: (stores: Stores) => ({
          ...stores,
          probes: { ...stores.probes, database: () => new Promise(() => {}) },
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
  })

  describe('4.2 GET /info', () => {
    it('200 with name and version from package.json, status "running" and the Unix time in seconds', async () => {
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

  describe('4.3 POST /auth/register', () => {
    const register = (body: unknown) => call(service.app, 'POST', '/auth/register', { body })

    it('200 with data {email, created_at, access_token (15 min), refresh_token (7 days)}', async () => {
      const email = uniqueEmail()
      const reply = await register({ email, password: PASSWORD })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: {
          email,
          created_at: expect.stringMatching(/Z$/),
          access_token: expect.any(String),
          refresh_token: expect.any(String),
        },
      })
      const access = decodeJwt(reply.body.data.access_token).claims
      const refreshClaims = decodeJwt(reply.body.data.refresh_token).claims
      expect(access.exp - access.iat).toBe(900)
      expect(refreshClaims.exp - refreshClaims.iat).toBe(604_800)
    })

    it.each([
      ['no @', 'user.example.com'],
      ['two @', 'a@b@example.com'],
      ['space inside', 'a b@example.com'],
      ['domain label starting with a hyphen', 'a@-example.com'],
      ['empty', ''],
      ['over 254 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`],
      ['non-ASCII', 'jörg@example.com'],
      ['SQL', "' OR 1=1 --"],
    ])('400 for an e-mail that is not valid: %s', async (_case, email) => {
      const reply = await register({ email, password: PASSWORD })
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({
        code: 400,
        message: 'Invalid request: /email must be a valid e-mail address',
        data: { errors: [{ field: '/email', message: 'must be a valid e-mail address' }] },
      })
    })

    it.each([
      ['7 characters', 'a'.repeat(7), 'must have at least 8 characters'],
      ['101 characters', 'a'.repeat(101), 'must have at most 100 characters'],
      ['7 emoji (14 UTF-16 units)', '😀'.repeat(7), 'must have at least 8 characters'],
      ['101 emoji', '😀'.repeat(101), 'must have at most 100 characters'],
      ['a lone surrogate', 'abcdefgh\ud800', 'must be well-formed Unicode (no lone surrogates)'],
    ])('400 for a password of %s', async (_case, password, message) => {
      const reply = await register({ email: uniqueEmail(), password })
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({
        code: 400,
        message: `Invalid request: /password ${message}`,
        data: { errors: [{ field: '/password', message }] },
      })
    })

    it.each([
      ['8 characters', 'a'.repeat(8)],
      ['100 characters', 'a'.repeat(100)],
      ['8 emoji', '😀'.repeat(8)],
      ['100 emoji', '😀'.repeat(100)],
    ])('200 for a password of %s (8 to 100 code points inclusive)', async (_case, password) => {
      const email = uniqueEmail()
      expect((await register({ email, password })).status).toBe(200)
      expect((await call(service.app, 'POST', '/auth/login', { body: { email, password } })).status).toBe(200)
    })

    it('409 for an e-mail already registered, and the first account is unchanged', async () => {
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
    })

    it('409 for exactly one of two concurrent registrations with one e-mail', async () => {
      const email = uniqueEmail()
      const replies = await Promise.all([1, 2, 3].map(() => register({ email, password: PASSWORD })))
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409])
    })

    it('rule 1: the account is created with a generated id and only an Argon2 hash of the password', async () => {
      const email = uniqueEmail()
      await register({ email, password: PASSWORD })
      const stored = await service.stores.users.findByEmail(email)
      expect(stored?.id).toMatch(/^[1-9]\d{9}$/)
      expect(stored?.passwordHash.startsWith('$argon2id$')).toBe(true)
    })

    it('rule 2: the new user is logged in: the pair works and the refresh token is stored', async () => {
      const reply = await register({ email: uniqueEmail(), password: PASSWORD })
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(reply.body.data.access_token) })
      expect(me.status).toBe(200)
      const rotated = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: reply.body.data.refresh_token },
      })
      expect(rotated.status).toBe(200)
    })
  })

  describe('4.4 POST /auth/login', () => {
    const login = (body: unknown) => call(service.app, 'POST', '/auth/login', { body })

    it('200 with data {id, email, created_at, access_token, refresh_token}', async () => {
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
          created_at: registered.body.data.created_at,
          access_token: expect.any(String),
          refresh_token: expect.any(String),
        },
      })
      expect(decodeJwt(reply.body.data.access_token).claims.sub).toBe(reply.body.data.id)
    })

    it.each([
      ['a missing password', { email: 'a@example.com' }, '/password', 'is required'],
      ['a missing e-mail', { password: PASSWORD }, '/email', 'is required'],
      ['a numeric password', { email: 'a@example.com', password: 12345678 }, '/password', 'must be a string'],
      [
        'an e-mail that is not valid',
        { email: 'nope', password: PASSWORD },
        '/email',
        'must be a valid e-mail address',
      ],
    ])('400 for %s', async (_case, body, field, message) => {
      const reply = await login(body)
      expect(reply.status).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message }])
    })

    it('rule 1: a wrong e-mail and a wrong password yield the same 401 with one message', async () => {
      const user = await registerUser(service.app)
      const wrongPassword = await login({ email: user.email, password: 'wrong password' })
      const wrongEmail = await login({ email: uniqueEmail(), password: PASSWORD })
      expectError(wrongPassword, 401, MESSAGES.invalidCredentials)
      expectError(wrongEmail, 401, MESSAGES.invalidCredentials)
      expect(wrongEmail.text).toBe(wrongPassword.text)
      expect(Object.keys(wrongEmail.headers).sort()).toEqual(Object.keys(wrongPassword.headers).sort())
    })

    it('rule 2: a successful login stores a new refresh token, replacing the previous one', async () => {
      const user = await registerUser(service.app)
      const again = await login({ email: user.email, password: PASSWORD })
      expect(again.body.data.refresh_token).not.toBe(user.refreshToken)
      expectError(
        await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
        401,
        MESSAGES.refreshTokenInvalid,
      )
    })

    it('rule 3: failed password attempts are logged with the user id and client address, never the password', async () => {
      const user = await registerUser(service.app)
      await login({ email: user.email, password: 'wrong password 3' })
      const failure = service
        .logs()
        .find((record) => record.event === 'login_failed' && record.userId === user.id && record.level === 40)
      expect(failure).toMatchObject({
        reason: 'wrong_password',
        clientAddress: '127.0.0.1',
        msg: 'login failed',
      })
      expect(service.logLines.join('\n')).not.toContain('wrong password 3')
    })
  })

  describe('4.5 POST /auth/refresh', () => {
    const refresh = (body: unknown) => call(service.app, 'POST', '/auth/refresh', { body })

    it('200 with data {access_token, refresh_token}: a new pair', async () => {
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
      ['a missing refresh_token', {}, '/refresh_token', 'is required'],
      ['a numeric refresh_token', { refresh_token: 42 }, '/refresh_token', 'must be a string'],
      ['an empty refresh_token', { refresh_token: '' }, '/refresh_token', 'must have at least 1 characters'],
    ])('400 for %s', async (_case, body, field, message) => {
      const reply = await refresh(body)
      expect(reply.status).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message }])
    })

    it('rule 1: a token with a bad signature is 401', async () => {
      const user = await registerUser(service.app)
      const [header, claims, signature = ''] = user.refreshToken.split('.')
      const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`
      expectError(
        await refresh({ refresh_token: `${header}.${claims}.${flipped}` }),
        401,
        MESSAGES.refreshTokenInvalid,
      )
    })

    it('rule 1: an access token (token_type not Refresh) is 401 with the wrong-type message', async () => {
      const user = await registerUser(service.app)
      expectError(await refresh({ refresh_token: user.accessToken }), 401, MESSAGES.tokenWrongType)
    })

    it('rule 1: an expired refresh token is 401', async () => {
      const clock = createFixedClock(Date.now())
      const past = await startTestService(backend, { clock })
      try {
        const user = await registerUser(past.app)
        clock.advance(8 * 86_400_000)
        expectError(
          await call(past.app, 'POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } }),
          401,
          MESSAGES.refreshTokenInvalid,
        )
      } finally {
        await past.close()
      }
    })

    it('rule 1: a valid token that is not in the store (logged out) is 401', async () => {
      const user = await registerUser(service.app)
      await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) })
      expectError(await refresh({ refresh_token: user.refreshToken }), 401, MESSAGES.refreshTokenInvalid)
    })

    it('rule 2: on success the old token is deleted, a new one stored and a new access token issued', async () => {
      const user = await registerUser(service.app)
      const reply = await refresh({ refresh_token: user.refreshToken })
      const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(reply.body.data.access_token) })
      expect(me.body.data.id).toBe(user.id)
      expect((await refresh({ refresh_token: reply.body.data.refresh_token })).status).toBe(200)
    })

    it('rule 3: a second use of the same refresh token is 401', async () => {
      const user = await registerUser(service.app)
      expect((await refresh({ refresh_token: user.refreshToken })).status).toBe(200)
      expectError(await refresh({ refresh_token: user.refreshToken }), 401, MESSAGES.refreshTokenInvalid)
    })
  })

  describe('4.6 POST /auth/delete-refresh-token (logout)', () => {
    it('200 {code: 200, message: "Success", data: null} and the stored token is deleted', async () => {
      const user = await registerUser(service.app)
      const reply = await call(service.app, 'POST', '/auth/delete-refresh-token', {
        headers: bearer(user.accessToken),
      })
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ code: 200, message: 'Success', data: null })
      const refresh = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: user.refreshToken },
      })
      expectError(refresh, 401, MESSAGES.refreshTokenInvalid)
    })

    it('takes no body: an empty body with or without a JSON Content-Type is accepted', async () => {
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
      expect(withType.statusCode).toBe(200)
      expect(withoutType.statusCode).toBe(200)
    })

    it('the user id comes from the access token: logging out one user leaves another logged in', async () => {
      const alice = await registerUser(service.app)
      const bob = await registerUser(service.app)
      await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(alice.accessToken) })
      const bobRefresh = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: bob.refreshToken },
      })
      expect(bobRefresh.status).toBe(200)
    })

    it('requires a valid access token (see spec 5)', async () => {
      expectError(
        await call(service.app, 'POST', '/auth/delete-refresh-token'),
        401,
        MESSAGES.authorizationMissing,
      )
    })
  })

  describe('4.7 other protected endpoints: GET /auth/me (DECISIONS)', () => {
    it('200 with data {id, email, created_at} of the caller', async () => {
      const user = await registerUser(service.app)
      const reply = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
      expect(reply.body).toEqual({
        code: 200,
        message: 'Success',
        data: { id: user.id, email: user.email, created_at: user.createdAt },
      })
    })

    it('401 for a valid token whose sub names no account', async () => {
      const { createTokenService } = await import('../../src/auth/token-service.js')
      const tokens = createTokenService(
        {
          secret: service.config.auth.jwtSecret!,
          previousSecrets: [],
          accessTokenTtlSeconds: 900,
          refreshTokenTtlSeconds: 86_400,
        },
        { now: () => Date.now() },
      )
      const ghost = tokens.issuePair('1000000000')
      expectError(
        await call(service.app, 'GET', '/auth/me', { headers: bearer(ghost.accessToken) }),
        401,
        MESSAGES.accessTokenInvalid,
      )
      expectError(
        await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: ghost.refreshToken } }),
        401,
        MESSAGES.refreshTokenInvalid,
      )
    })
  })
})
