import { createSigner, createVerifier } from 'fast-jwt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, TEST_SECRET, type TestService } from '../support/test-service.js'

const me = (service: TestService, headers: Record<string, string> = {}) =>
  call(service.app, 'GET', '/auth/me', { headers })

/** A token signed with the test secret (or another key) carrying exactly these claims and header. */
function craftToken(
  claims: Record<string, unknown>,
  options: { key?: string; header?: Record<string, unknown> } = {},
) {
  const sign = createSigner({
    key: options.key ?? TEST_SECRET,
    algorithm: 'HS256',
    header: { alg: 'HS256', ...options.header },
  })
  return sign(claims)
}

describe.each(backends)('spec 5: authentication [$name]', (backend) => {
  let service: TestService
  let user: Awaited<ReturnType<typeof registerUser>>
  beforeAll(async () => {
    service = await startTestService(backend)
    user = await registerUser(service.app)
  })
  afterAll(() => service.close())

  const validClaims = () => {
    const now = Math.floor(Date.now() / 1000)
    return { sub: user.id, token_type: 'Access', iat: now, exp: now + 600, jti: `jti-${Math.random()}` }
  }

  describe('5.1 protected endpoints require "Authorization: Bearer <access token>", never a URL parameter', () => {
    it('a valid bearer token is accepted', async () => {
      expect((await me(service, bearer(user.accessToken))).status).toBe(200)
    })

    it('a token in the query string is not accepted', async () => {
      const reply = await call(service.app, 'GET', '/auth/me', { query: { access_token: user.accessToken } })
      expectError(reply, 401, MESSAGES.authorizationMissing)
    })
  })

  describe('5.2 the checks, in order, each with its own 401', () => {
    it('check 1: the Authorization header is present', async () => {
      expectError(await me(service), 401, MESSAGES.authorizationMissing)
    })

    it.each([
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['a lower-case scheme', 'bearer TOKEN'],
      ['no token', 'Bearer '],
      ['the scheme alone', 'Bearer'],
      ['two spaces', 'Bearer  TOKEN'],
      ['a token with a space', 'Bearer TOKEN MORE'],
      ['no space', 'BearerTOKEN'],
    ])('check 2: it starts with "Bearer " (%s is refused)', async (_case, header) => {
      const value = header.replace('TOKEN', user.accessToken)
      expectError(await me(service, { authorization: value }), 401, MESSAGES.authorizationMalformed)
    })

    it('check 3: a bad signature is refused', async () => {
      const forged = craftToken(validClaims(), { key: 'not-the-secret-not-the-secret-0000' })
      expectError(await me(service, bearer(forged)), 401, MESSAGES.accessTokenInvalid)
    })

    it('check 3: an expired token is refused, with no leeway', async () => {
      const now = Math.floor(Date.now() / 1000)
      const expired = craftToken({ ...validClaims(), iat: now - 60, exp: now - 1 })
      expectError(await me(service, bearer(expired)), 401, MESSAGES.accessTokenInvalid)
      const clock = createFixedClock(Date.now())
      const issuedLongAgo = await startTestService(backend, { clock })
      try {
        const old = await registerUser(issuedLongAgo.app)
        expect((await me(issuedLongAgo, bearer(old.accessToken))).status).toBe(200)
        clock.advance(15 * 60_000)
        expectError(await me(issuedLongAgo, bearer(old.accessToken)), 401, MESSAGES.accessTokenInvalid)
      } finally {
        await issuedLongAgo.close()
      }
    })

    it('check 3: a token without exp is refused', async () => {
      const { exp: _exp, ...claims } = validClaims()
      expectError(await me(service, bearer(craftToken(claims))), 401, MESSAGES.accessTokenInvalid)
    })

    it('check 3: HS256 is pinned: alg "none" and other algorithms are refused', async () => {
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(validClaims())).toString('base64url')}.`
      expectError(await me(service, bearer(unsigned)), 401, MESSAGES.accessTokenInvalid)
      const hs512 = createSigner({ key: TEST_SECRET, algorithm: 'HS512' })(validClaims())
      expectError(await me(service, bearer(hs512)), 401, MESSAGES.accessTokenInvalid)
    })

    it('check 3: header fields kid and jku are ignored, never fetched', async () => {
      const token = craftToken(validClaims(), {
        header: { kid: 'other', jku: 'http://127.0.0.1:1/keys.json' },
      })
      expect((await me(service, bearer(token))).status).toBe(200)
    })

    it('check 4: token_type must be Access: a refresh token is refused with its own message', async () => {
      expectError(await me(service, bearer(user.refreshToken)), 401, MESSAGES.tokenWrongType)
    })

    it('the checks run in order: an expired refresh token fails check 3, not check 4', async () => {
      const now = Math.floor(Date.now() / 1000)
      const expiredRefresh = craftToken({ ...validClaims(), token_type: 'Refresh', exp: now - 1 })
      expectError(await me(service, bearer(expiredRefresh)), 401, MESSAGES.accessTokenInvalid)
    })

    it('the four failure messages are distinct texts', () => {
      const texts = [
        MESSAGES.authorizationMissing,
        MESSAGES.authorizationMalformed,
        MESSAGES.accessTokenInvalid,
        MESSAGES.tokenWrongType,
      ]
      expect(new Set(texts).size).toBe(4)
    })
  })

  describe('5.3 the user id from sub is handed to the handler', () => {
    it('each caller sees their own account', async () => {
      const other = await registerUser(service.app)
      expect((await me(service, bearer(user.accessToken))).body.data.id).toBe(user.id)
      expect((await me(service, bearer(other.accessToken))).body.data.id).toBe(other.id)
    })
  })

  describe('5.5 lifetimes and secret are configurable', () => {
    it('AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES and AUTH_REFRESH_TOKEN_EXPIRATION_DAYS set the lifetimes', async () => {
      const custom = await startTestService(backend, {
        env: { AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '5', AUTH_REFRESH_TOKEN_EXPIRATION_DAYS: '30' },
      })
      try {
        const account = await registerUser(custom.app)
        const access = decodeJwt(account.accessToken).claims
        const refresh = decodeJwt(account.refreshToken).claims
        expect(access.exp - access.iat).toBe(5 * 60)
        expect(refresh.exp - refresh.iat).toBe(30 * 86_400)
      } finally {
        await custom.close()
      }
    })

    it('AUTH_JWT_SECRET signs; AUTH_JWT_PREVIOUS_SECRETS still verify but never sign', async () => {
      const oldSecret = 'the-old-secret-the-old-secret-0000'
      const newSecret = 'the-new-secret-the-new-secret-1111'
      const instance = await backend.setup()
      try {
        const before = await startTestService(backend, { instance, env: { AUTH_JWT_SECRET: oldSecret } })
        const account = await registerUser(before.app)
        await before.close()
        const rotated = await startTestService(backend, {
          instance,
          env: {
            AUTH_JWT_SECRET: newSecret,
            AUTH_JWT_PREVIOUS_SECRETS: `unrelated-secret-aaaaaaaaaaaaaaaa,${oldSecret}`,
          },
        })
        const forgotten = await startTestService(backend, { instance, env: { AUTH_JWT_SECRET: newSecret } })
        try {
          expect((await me(rotated, bearer(account.accessToken))).status).toBe(200)
          const renewed = await call(rotated.app, 'POST', '/auth/refresh', {
            body: { refresh_token: account.refreshToken },
          })
          expect(renewed.status).toBe(200)
          const verifyNew = createVerifier({ key: newSecret, algorithms: ['HS256'] })
          expect(verifyNew(renewed.body.data.access_token).sub).toBe(account.id)
          expect(() => createVerifier({ key: oldSecret })(renewed.body.data.access_token)).toThrow()
          expectError(await me(forgotten, bearer(account.accessToken)), 401, MESSAGES.accessTokenInvalid)
        } finally {
          await rotated.close()
          await forgotten.close()
        }
      } finally {
        await instance.teardown()
      }
    })
  })

  describe('5.8 cross-origin', () => {
    it('development: any origin, method and header', async () => {
      const reply = await service.app.inject({
        method: 'OPTIONS',
        url: '/auth/login',
        headers: {
          origin: 'https://anywhere.example',
          'access-control-request-method': 'PATCH',
          'access-control-request-headers': 'x-custom',
        },
      })
      expect(reply.statusCode).toBe(204)
      expect(reply.headers['access-control-allow-origin']).toBe('https://anywhere.example')
      expect(reply.headers['access-control-allow-headers']).toBe('x-custom')
    })

    it('production: only CORS_ORIGINS, methods GET, POST, PUT, DELETE and headers content-type, authorization', async () => {
      const production = await startTestService(backend, {
        env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.com' },
      })
      try {
        const allowed = await production.app.inject({
          method: 'OPTIONS',
          url: '/auth/login',
          headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
        })
        expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com')
        expect(allowed.headers['access-control-allow-methods']).toBe('GET, POST, PUT, DELETE')
        expect(allowed.headers['access-control-allow-headers']).toBe('content-type, authorization')
        const other = await production.app.inject({
          method: 'OPTIONS',
          url: '/auth/login',
          headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
        })
        expect(other.headers['access-control-allow-origin']).toBeUndefined()
      } finally {
        await production.close()
      }
    })

    it('production without CORS_ORIGINS: no origin is allowed', async () => {
      const closed = await startTestService(backend, { env: { NODE_ENV: 'production' } })
      try {
        for (const method of ['OPTIONS', 'POST'] as const) {
          const reply = await closed.app.inject({
            method,
            url: '/auth/login',
            headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
          })
          expect(reply.headers['access-control-allow-origin']).toBeUndefined()
        }
      } finally {
        await closed.close()
      }
    })
  })
})
