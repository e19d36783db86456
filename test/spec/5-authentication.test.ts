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

// docs/api.md section 5: the Authorization header, the four checks in order, configuration of tokens, CORS.
describe.each(backends)('R5 authentication [$name]', (backend) => {
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

  describe('R5.1 the access token travels in "Authorization: Bearer <token>" only', () => {
    it('R5.1 both protected endpoints take the header, and neither takes a token in the URL', async () => {
      expect((await me(service, bearer(user.accessToken))).status).toBe(200)
      const inQuery = await call(service.app, 'GET', '/auth/me', {
        query: { access_token: user.accessToken },
      })
      expectError(inQuery, 401, MESSAGES.authorizationMissing)
      const logoutInQuery = await call(service.app, 'POST', '/auth/delete-refresh-token', {
        query: { access_token: user.accessToken },
      })
      expectError(logoutInQuery, 401, MESSAGES.authorizationMissing)
      const other = await registerUser(service.app)
      const logout = await call(service.app, 'POST', '/auth/delete-refresh-token', {
        headers: bearer(other.accessToken),
      })
      expect(logout.status).toBe(200)
    })
  })

  describe('R5.2 the checks, in order, each with its own 401', () => {
    it('R5.2.1 the Authorization header must be present', async () => {
      expectError(await me(service), 401, MESSAGES.authorizationMissing)
    })

    it.each([
      ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['another scheme name', 'Token TOKEN'],
      ['a lower-case scheme', 'bearer TOKEN'],
      ['no token', 'Bearer '],
      ['the scheme alone', 'Bearer'],
      ['two spaces', 'Bearer  TOKEN'],
      ['a token with a space', 'Bearer TOKEN MORE'],
      ['no space', 'BearerTOKEN'],
    ])('R5.2.2 the header must be "Bearer <token>": %s is refused', async (_case, header) => {
      const value = header.replace('TOKEN', user.accessToken)
      expectError(await me(service, { authorization: value }), 401, MESSAGES.authorizationMalformed)
    })

    it.each([
      ['not a JWT', () => 'x.y.z'],
      ['a bad signature', () => craftToken(validClaims(), { key: 'not-the-secret-not-the-secret-0000' })],
      [
        'a token expired a second ago',
        () => {
          const now = Math.floor(Date.now() / 1000)
          return craftToken({ ...validClaims(), iat: now - 60, exp: now - 1 })
        },
      ],
      [
        'a token without exp',
        () => {
          const { exp: _exp, ...claims } = validClaims()
          return craftToken(claims)
        },
      ],
      [
        'alg "none"',
        () =>
          `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(validClaims())).toString('base64url')}.`,
      ],
      [
        'HS512 (only HS256 is accepted)',
        () => createSigner({ key: TEST_SECRET, algorithm: 'HS512' })(validClaims()),
      ],
    ])('R5.2.3 the token must be valid: %s is refused', async (_case, token) => {
      expectError(await me(service, bearer(token())), 401, MESSAGES.accessTokenInvalid)
    })

    it('R5.2.3 expiry has no leeway: a token of the service is refused once its 15 minutes are over', async () => {
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

    it('R5.2.3 header fields kid and jku are ignored, never fetched', async () => {
      const token = craftToken(validClaims(), {
        header: { kid: 'other', jku: 'http://127.0.0.1:1/keys.json' },
      })
      expect((await me(service, bearer(token))).status).toBe(200)
    })

    it('R5.2.4 token_type must be Access: a refresh token is refused with its own message', async () => {
      expectError(await me(service, bearer(user.refreshToken)), 401, MESSAGES.tokenWrongType)
    })

    it('R5.2.5 the first failing check answers: an expired refresh token fails R5.2.3, not R5.2.4', async () => {
      const now = Math.floor(Date.now() / 1000)
      const expiredRefresh = craftToken({ ...validClaims(), token_type: 'Refresh', exp: now - 1 })
      expectError(await me(service, bearer(expiredRefresh)), 401, MESSAGES.accessTokenInvalid)
    })

    it('R5.2.6 the four failures answer four distinct messages, the documented ones', async () => {
      const failures: Array<{ headers: Record<string, string>; message: string }> = [
        { headers: {}, message: MESSAGES.authorizationMissing },
        { headers: { authorization: 'Token x' }, message: MESSAGES.authorizationMalformed },
        { headers: bearer('x.y.z'), message: MESSAGES.accessTokenInvalid },
        { headers: bearer(user.refreshToken), message: MESSAGES.tokenWrongType },
      ]
      const answered: string[] = []
      for (const { headers, message } of failures) {
        const reply = await me(service, headers)
        expectError(reply, 401, message)
        answered.push(reply.body.message)
      }
      expect(new Set(answered).size).toBe(4)
    })
  })

  describe('R5.3 the user id from sub is handed to the handler', () => {
    it('R5.3 each caller sees their own account', async () => {
      const other = await registerUser(service.app)
      expect((await me(service, bearer(user.accessToken))).body.data.id).toBe(user.id)
      expect((await me(service, bearer(other.accessToken))).body.data.id).toBe(other.id)
    })
  })

  describe('R5.4 a 401 about a bearer token carries its challenge (RFC 6750 section 3)', () => {
    const BARE = 'Bearer'
    const INVALID = 'Bearer error="invalid_token"'

    it('R5.4 protected endpoints: "Bearer" without credentials, with error="invalid_token" for a token refused', async () => {
      const now = Math.floor(Date.now() / 1000)
      const cases: Array<[string, Record<string, string>, string]> = [
        ['no header', {}, BARE],
        ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, BARE],
        ['a malformed header', { authorization: 'Bearer  x' }, BARE],
        ['a token that is not a JWT', bearer('x.y.z'), INVALID],
        ['an expired token', bearer(craftToken({ ...validClaims(), exp: now - 1 })), INVALID],
        ['a refresh token', bearer(user.refreshToken), INVALID],
      ]
      for (const [name, headers, challenge] of cases) {
        for (const [method, url] of [
          ['GET', '/auth/me'],
          ['POST', '/auth/delete-refresh-token'],
        ] as const) {
          const reply = await call(service.app, method, url, { headers })
          expect(reply.status, `${name}: ${method} ${url}`).toBe(401)
          expect(reply.headers['www-authenticate'], `${name}: ${method} ${url}`).toBe(challenge)
        }
      }
    })

    it('R5.4 a valid token whose account does not exist is an invalid token too', async () => {
      const reply = await me(service, bearer(craftToken({ ...validClaims(), sub: '1000000001' })))
      expectError(reply, 401, MESSAGES.accessTokenInvalid)
      expect(reply.headers['www-authenticate']).toBe(INVALID)
    })

    it('R5.4 refresh: a refresh token refused, or an access token in its place, is an invalid token', async () => {
      for (const refreshToken of ['x.y.z', user.accessToken]) {
        const reply = await call(service.app, 'POST', '/auth/refresh', {
          body: { refresh_token: refreshToken },
        })
        expect(reply.status).toBe(401)
        expect(reply.headers['www-authenticate']).toBe(INVALID)
      }
    })
  })

  describe('R5.5 lifetimes and secrets are configuration', () => {
    it('R5.5.1 AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES and AUTH_REFRESH_TOKEN_EXPIRATION_DAYS set the lifetimes', async () => {
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

    it('R5.5.2 AUTH_JWT_SECRET signs; AUTH_JWT_PREVIOUS_SECRETS still verify but never sign', async () => {
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

  describe('R5.8 cross-origin requests', () => {
    it('R5.8.1 outside production: any origin, any method and the headers it asks for', async () => {
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
      expect(reply.headers['access-control-allow-methods']).toBe(
        'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
      )
    })

    it('R5.8.4 a preflight may be cached ten minutes; Retry-After and the rate-limit headers are readable by a page', async () => {
      const production = await startTestService(backend, {
        env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.com', RATE_LIMIT_PER_MINUTE: '5' },
      })
      try {
        for (const [app, origin] of [
          [service.app, 'https://anywhere.example'],
          [production.app, 'https://app.example.com'],
        ] as const) {
          const preflight = await app.inject({
            method: 'OPTIONS',
            url: '/auth/login',
            headers: { origin, 'access-control-request-method': 'POST' },
          })
          expect(preflight.headers['access-control-max-age']).toBe('600')
          const login = await app.inject({
            method: 'POST',
            url: '/auth/login',
            headers: { origin },
            payload: { email: 'nobody@example.com', password: 'wrong password' },
          })
          expect(login.headers['access-control-expose-headers']).toBe(
            'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset',
          )
        }
      } finally {
        await production.close()
      }
    })

    it('R5.8.2 production: only CORS_ORIGINS, methods GET, POST, PUT, DELETE and headers content-type, authorization', async () => {
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

    it('R5.8.3 production without CORS_ORIGINS: no origin is allowed', async () => {
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
