import { createVerifier } from 'fast-jwt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, decodeJwt, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'

describe.each(backends)('spec 2: resources and their fields [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  describe('2.1 user account', () => {
    it('id: a 10-digit numeric identifier (first digit not 0), returned by login', async () => {
      const user = await registerUser(service.app)
      expect(user.id).toMatch(/^[1-9][0-9]{9}$/)
    })

    it('id: drawn at random, not sequential', async () => {
      const ids: number[] = []
      for (let i = 0; i < 5; i++) ids.push(Number((await registerUser(service.app)).id))
      const steps = ids.slice(1).map((id, i) => id - (ids[i] as number))
      expect(steps.every((step) => step === 1)).toBe(false)
      expect(new Set(ids).size).toBe(5)
    })

    it('email: unique; the same address in another case or with spaces is the same account', async () => {
      const email = uniqueEmail()
      await registerUser(service.app, email)
      const again = await call(service.app, 'POST', '/auth/register', {
        body: { email: `  ${email.toUpperCase()} `, password: PASSWORD },
      })
      expect(again.status).toBe(409)
      const login = await call(service.app, 'POST', '/auth/login', {
        body: { email: email.toUpperCase(), password: PASSWORD },
      })
      expect(login.status).toBe(200)
      expect(login.body.data.email).toBe(email)
    })

    it('created_at: ISO 8601 UTC with milliseconds, the same from register and login', async () => {
      const email = uniqueEmail()
      const registered = await call(service.app, 'POST', '/auth/register', {
        body: { email, password: PASSWORD },
      })
      const loggedIn = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
      expect(registered.body.data.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      expect(loggedIn.body.data.created_at).toBe(registered.body.data.created_at)
      expect(Math.abs(Date.parse(registered.body.data.created_at) - Date.now())).toBeLessThan(60_000)
    })

    it('password: never returned, stored only as an Argon2id hash with a random salt', async () => {
      const first = await registerUser(service.app, uniqueEmail(), PASSWORD)
      const second = await registerUser(service.app, uniqueEmail(), PASSWORD)
      for (const user of [first, second]) {
        const me = await call(service.app, 'GET', '/auth/me', {
          headers: { authorization: `Bearer ${user.accessToken}` },
        })
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
  })

  describe('2.2 token pair', () => {
    it('access_token: a JWT of type Access with a default lifetime of 15 minutes', async () => {
      const { claims } = decodeJwt((await registerUser(service.app)).accessToken)
      expect(claims.token_type).toBe('Access')
      expect(claims.exp - claims.iat).toBe(15 * 60)
    })

    it('refresh_token: a JWT of type Refresh with a default lifetime of 7 days', async () => {
      const { claims } = decodeJwt((await registerUser(service.app)).refreshToken)
      expect(claims.token_type).toBe('Refresh')
      expect(claims.exp - claims.iat).toBe(7 * 86_400)
    })
  })

  describe('2.3 token claims', () => {
    it('sub is the user id, exp an integer Unix time in seconds, token_type Access or Refresh', async () => {
      const user = await registerUser(service.app)
      for (const [token, type] of [
        [user.accessToken, 'Access'],
        [user.refreshToken, 'Refresh'],
      ] as const) {
        const { claims } = decodeJwt(token)
        expect(claims.sub).toBe(user.id)
        expect(Number.isInteger(claims.exp)).toBe(true)
        expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60)
        expect(claims.token_type).toBe(type)
      }
    })

    it('signed with HS256 using the configured secret', async () => {
      const user = await registerUser(service.app)
      const verify = createVerifier({ key: TEST_SECRET, algorithms: ['HS256'] })
      for (const token of [user.accessToken, user.refreshToken]) {
        expect(decodeJwt(token).header.alg).toBe('HS256')
        expect(verify(token).sub).toBe(user.id)
      }
      const wrongKey = createVerifier({ key: 'another-secret-another-secret-0000', algorithms: ['HS256'] })
      expect(() => wrongKey(user.accessToken)).toThrow()
    })

    it('every token carries iat and a unique jti, so tokens minted in the same second differ', async () => {
      const email = uniqueEmail()
      await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })
      const logins = await Promise.all(
        [1, 2, 3].map(() =>
          call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } }),
        ),
      )
      const tokens = logins.flatMap((login) => [login.body.data.access_token, login.body.data.refresh_token])
      expect(new Set(tokens).size).toBe(tokens.length)
      expect(new Set(tokens.map((token) => decodeJwt(token).claims.jti)).size).toBe(tokens.length)
    })
  })

  describe('2.4 stored refresh token', () => {
    it('at most one current refresh token per user: a new login replaces the earlier one', async () => {
      const user = await registerUser(service.app)
      const second = await call(service.app, 'POST', '/auth/login', {
        body: { email: user.email, password: PASSWORD },
      })
      const old = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: user.refreshToken },
      })
      expect(old.status).toBe(401)
      const current = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: second.body.data.refresh_token },
      })
      expect(current.status).toBe(200)
    })

    it('the stored token expires with the token: its lifetime equals the refresh token lifetime', async () => {
      const user = await registerUser(service.app)
      const { claims } = decodeJwt(user.refreshToken)
      const { refreshTokenDigest } = await import('../../src/auth/token-service.js')
      const digest = refreshTokenDigest(user.refreshToken)
      const next = { digest: 'f'.repeat(64), expiresAt: claims.exp * 1000 + 1000 }
      // at the expiry instant the stored token is gone; one millisecond before, it is still there
      expect(await service.stores.refreshTokens.rotate(user.id, digest, next, claims.exp * 1000)).toBe(false)
      expect(await service.stores.refreshTokens.rotate(user.id, digest, next, claims.exp * 1000 - 1)).toBe(
        true,
      )
    })
  })

  describe('2.5 response envelope', () => {
    it('register, login and refresh answer {code: 200, message: "Success", data}', async () => {
      const email = uniqueEmail()
      const register = await call(service.app, 'POST', '/auth/register', {
        body: { email, password: PASSWORD },
      })
      const login = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
      const refresh = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: login.body.data.refresh_token },
      })
      expect(Object.keys(register.body.data).sort()).toEqual([
        'access_token',
        'created_at',
        'email',
        'refresh_token',
      ])
      expect(Object.keys(login.body.data).sort()).toEqual([
        'access_token',
        'created_at',
        'email',
        'id',
        'refresh_token',
      ])
      expect(Object.keys(refresh.body.data).sort()).toEqual(['access_token', 'refresh_token'])
      for (const reply of [register, login, refresh]) {
        expect(reply.status).toBe(200)
        expect(Object.keys(reply.body).sort()).toEqual(['code', 'data', 'message'])
        expect(reply.body.code).toBe(200)
        expect(reply.body.message).toBe('Success')
      }
    })

    it('health and info are plain objects without the envelope', async () => {
      const health = await call(service.app, 'GET', '/health')
      const info = await call(service.app, 'GET', '/info')
      expect(health.body).not.toHaveProperty('code')
      expect(health.body.status).toBe('ok')
      expect(info.body).not.toHaveProperty('code')
      expect(info.body.status).toBe('running')
    })
  })
})
