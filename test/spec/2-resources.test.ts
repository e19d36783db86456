import { createVerifier } from 'fast-jwt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refreshTokenDigest } from '../../src/auth/token-service.js'
import { backends } from '../support/backends.js'
import {
  bearer,
  call,
  decodeJwt,
  expectError,
  PASSWORD,
  type Registered,
  registerUser,
  uniqueEmail,
} from '../support/http.js'
import { FIELD_MESSAGES, MESSAGES } from '../support/messages.js'
import { startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'

// docs/api.md section 2: the resources and their fields.
describe.each(backends)('R2 resources [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  const register = (body: unknown) => call(service.app, 'POST', '/auth/register', { body })
  const login = (body: unknown) => call(service.app, 'POST', '/auth/login', { body })

  describe('R2.1 user account', () => {
    it('R2.1.1 the id has 10 digits, the first not 0, and is drawn at random', async () => {
      const ids: string[] = []
      for (let i = 0; i < 5; i++) ids.push((await registerUser(service.app)).id)
      for (const id of ids) expect(id).toMatch(/^[1-9][0-9]{9}$/)
      const steps = ids.slice(1).map((id, i) => Number(id) - Number(ids[i]))
      expect(steps.every((step) => step === 1)).toBe(false)
      expect(new Set(ids).size).toBe(5)
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
    ])('R2.1.2 an e-mail that is not valid is a 400: %s', async (_case, email) => {
      const reply = await register({ email, password: PASSWORD })
      expect(reply.status).toBe(400)
      expect(reply.body).toEqual({
        code: 400,
        message: `Invalid request: /email ${FIELD_MESSAGES.invalidEmail}`,
        data: { errors: [{ field: '/email', message: FIELD_MESSAGES.invalidEmail }] },
      })
    })

    it('R2.1.3 the e-mail is trimmed and lower-cased: another case or surrounding spaces name the same account', async () => {
      const email = uniqueEmail()
      const registered = await register({ email: `  ${email.toUpperCase()} `, password: PASSWORD })
      expect(registered.body.data.email).toBe(email)
      expectError(await register({ email, password: PASSWORD }), 409, MESSAGES.emailTaken)
      const loggedIn = await login({ email: email.toUpperCase(), password: PASSWORD })
      expect(loggedIn.status).toBe(200)
      expect(loggedIn.body.data.email).toBe(email)
    })

    it('R2.1.4 created_at is ISO 8601 UTC with milliseconds, set at registration and the same in every answer', async () => {
      const email = uniqueEmail()
      const registered = await register({ email, password: PASSWORD })
      const loggedIn = await login({ email, password: PASSWORD })
      const createdAt = registered.body.data.created_at
      expect(createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      expect(Math.abs(Date.parse(createdAt) - Date.now())).toBeLessThan(60_000)
      expect(loggedIn.body.data.created_at).toBe(createdAt)
      const me = await call(service.app, 'GET', '/auth/me', {
        headers: bearer(loggedIn.body.data.access_token),
      })
      expect(me.body.data.created_at).toBe(createdAt)
    })

    it.each([
      ['7 characters', 'a'.repeat(7), false],
      ['8 characters', 'a'.repeat(8), true],
      ['100 characters', 'a'.repeat(100), true],
      ['101 characters', 'a'.repeat(101), false],
      ['7 emoji (14 UTF-16 units)', '😀'.repeat(7), false],
      ['8 emoji', '😀'.repeat(8), true],
      ['100 emoji', '😀'.repeat(100), true],
      ['101 emoji', '😀'.repeat(101), false],
      ['a lone surrogate', 'abcdefgh\ud800', false],
    ])(
      'R2.1.5 a password of %s (8 to 100 code points of well-formed Unicode)',
      async (_case, password, accepted) => {
        const email = uniqueEmail()
        const reply = await register({ email, password })
        const message = FIELD_MESSAGES.newPassword
        if (accepted) {
          expect(reply.status, reply.text).toBe(200)
          expect((await login({ email, password })).status).toBe(200)
        } else {
          expect(reply.status).toBe(400)
          expect(reply.body).toEqual({
            code: 400,
            message: `Invalid request: /password ${message}`,
            data: { errors: [{ field: '/password', message }] },
          })
        }
      },
    )

    it('R2.1.6 the password is never returned and stored only as an Argon2id hash with a random salt', async () => {
      const first = await registerUser(service.app, uniqueEmail(), PASSWORD)
      const second = await registerUser(service.app, uniqueEmail(), PASSWORD)
      for (const user of [first, second]) {
        const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
        expect(me.text).not.toContain(PASSWORD)
        expect(me.text).not.toContain('argon2')
      }
      const stored = await Promise.all([first, second].map((user) => service.stores.users.findById(user.id)))
      for (const record of stored) {
        expect(record?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/)
        expect(record?.passwordHash).not.toContain(PASSWORD)
      }
      // same password, different salts
      expect(stored[0]?.passwordHash).not.toBe(stored[1]?.passwordHash)
    })

    it('R2.1.7 e-mail addresses and passwords are data: quotes and SQL are stored and compared as given', async () => {
      const password = "'); DROP TABLE users; --"
      const email = `o'reilly+${Date.now()}@example.com`
      expect((await register({ email, password })).status).toBe(200)
      expect((await login({ email, password })).status).toBe(200)
      expectError(await login({ email, password: "' OR '1'='1" }), 401, MESSAGES.invalidCredentials)
      expect((await registerUser(service.app)).id).toMatch(/^\d{10}$/)
    })
  })

  describe('R2.2 token pair', () => {
    it('R2.2.1 the access token lives 15 minutes and the refresh token 7 days by default', async () => {
      const email = uniqueEmail()
      const registered = await register({ email, password: PASSWORD })
      const loggedIn = await login({ email, password: PASSWORD })
      for (const { data } of [registered.body, loggedIn.body]) {
        const access = decodeJwt(data.access_token).claims
        const refresh = decodeJwt(data.refresh_token).claims
        expect(access.exp - access.iat).toBe(15 * 60)
        expect(refresh.exp - refresh.iat).toBe(7 * 86_400)
      }
    })
  })

  describe('R2.3 token claims', () => {
    it('R2.3.1 sub is the user id, token_type Access or Refresh, iat and exp whole Unix seconds', async () => {
      const user = await registerUser(service.app)
      for (const [token, type] of [
        [user.accessToken, 'Access'],
        [user.refreshToken, 'Refresh'],
      ] as const) {
        const { claims } = decodeJwt(token)
        expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'jti', 'sub', 'token_type'])
        expect(claims.sub).toBe(user.id)
        expect(claims.token_type).toBe(type)
        expect(Number.isInteger(claims.exp)).toBe(true)
        expect(Number.isInteger(claims.iat)).toBe(true)
        expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60)
      }
    })

    it('R2.3.2 tokens are signed with HS256 using the configured secret', async () => {
      const user = await registerUser(service.app)
      const verify = createVerifier({ key: TEST_SECRET, algorithms: ['HS256'] })
      for (const token of [user.accessToken, user.refreshToken]) {
        expect(decodeJwt(token).header).toEqual({ alg: 'HS256', typ: 'JWT' })
        expect(verify(token).sub).toBe(user.id)
      }
      const wrongKey = createVerifier({ key: 'another-secret-another-secret-0000', algorithms: ['HS256'] })
      expect(() => wrongKey(user.accessToken)).toThrow()
    })

    it('R2.3.3 every token carries a unique jti, so tokens issued in the same second differ', async () => {
      const email = uniqueEmail()
      await register({ email, password: PASSWORD })
      const logins = await Promise.all([1, 2, 3].map(() => login({ email, password: PASSWORD })))
      const tokens = logins.flatMap((reply) => [reply.body.data.access_token, reply.body.data.refresh_token])
      expect(new Set(tokens).size).toBe(tokens.length)
      expect(new Set(tokens.map((token) => decodeJwt(token).claims.jti)).size).toBe(tokens.length)
    })
  })

  describe('R2.4 sessions and their stored refresh tokens', () => {
    it('R2.4.1 the stored token expires with the token: gone at its exp, still there a millisecond before', async () => {
      // two users, one instant each: a store may forget a session for good once it has expired at a time it was given
      const [gone, kept] = [await registerUser(service.app), await registerUser(service.app)]
      const { sessions } = service.stores
      const rotateAt = (user: Registered, offsetMs: number) => {
        const { claims } = decodeJwt(user.refreshToken)
        const next = {
          digest: 'f'.repeat(64),
          expiresAt: claims.exp * 1000 + 1000,
          clientAddress: null,
          lifetimeMs: null,
        }
        return sessions.rotate(
          user.id,
          refreshTokenDigest(user.refreshToken),
          next,
          claims.exp * 1000 + offsetMs,
        )
      }
      expect(await rotateAt(gone, 0)).toBe(false)
      expect(await rotateAt(kept, -1)).toBe(true)
    })
  })
})
