import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const refresh = (service: TestService, token: string) =>
  call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })

const logout = (service: TestService, accessToken: string) =>
  call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(accessToken) })

// docs/api.md section 3: every transition of the stored refresh token, and the single-use rule.
describe.each(backends)('R3 refresh-token lifecycle [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    // a clock that stands still: R3.7's "same second" cannot depend on how fast this machine is
    service = await startTestService(backend, { clock: createFixedClock(Date.now()) })
  })
  afterAll(() => service.close())

  const login = (email: string) =>
    call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })

  it('R3.1 none → register → stored: the refresh token returned is the stored one', async () => {
    const reply = await call(service.app, 'POST', '/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD },
    })
    expect(reply.status).toBe(200)
    expect(decodeJwt(reply.body.data.access_token).claims.token_type).toBe('Access')
    expect((await refresh(service, reply.body.data.refresh_token)).status).toBe(200)
  })

  it('R3.2 a login stores a new refresh token, replacing the earlier one (from stored, and from none)', async () => {
    // stored → login → stored: the earlier token is refused, the new one works
    const user = await registerUser(service.app)
    const second = await login(user.email)
    expect(second.status).toBe(200)
    expect(second.body.data.refresh_token).not.toBe(user.refreshToken)
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    const rotated = await refresh(service, second.body.data.refresh_token)
    expect(rotated.status).toBe(200)
    // none → login → stored
    await logout(service, rotated.body.data.access_token)
    const third = await login(user.email)
    expect(third.status).toBe(200)
    expect((await refresh(service, third.body.data.refresh_token)).status).toBe(200)
  })

  it('R3.3 stored → refresh with the current token → stored (new): the old one is deleted at once, a new pair returned', async () => {
    const user = await registerUser(service.app)
    const first = await refresh(service, user.refreshToken)
    expect(first.status).toBe(200)
    const { access_token, refresh_token } = first.body.data
    expect(decodeJwt(access_token).claims).toMatchObject({ sub: user.id, token_type: 'Access' })
    expect(decodeJwt(refresh_token).claims).toMatchObject({ sub: user.id, token_type: 'Refresh' })
    expect(refresh_token).not.toBe(user.refreshToken)
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(access_token) })
    expect(me.body.data.id).toBe(user.id)
    expect((await refresh(service, refresh_token)).status).toBe(200)
  })

  it('R3.4 stored → a refresh that fails its checks → 401, and the stored token is unchanged', async () => {
    const user = await registerUser(service.app)
    const [header, claims] = user.refreshToken.split('.')
    const forged = `${header}.${claims}.${'A'.repeat(43)}`
    for (const bad of [forged, 'not-a-jwt', `${user.refreshToken}x`]) {
      expectError(await refresh(service, bad), 401, MESSAGES.refreshTokenInvalid)
    }
    expectError(await refresh(service, user.accessToken), 401, MESSAGES.tokenWrongType)
    expect((await refresh(service, user.refreshToken)).status).toBe(200)
  })

  it('R3.5 stored → logout → none: the stored refresh token is refused from then on', async () => {
    const user = await registerUser(service.app)
    const reply = await logout(service, user.accessToken)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ code: 200, message: 'Success', data: null })
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
  })

  it('R3.6 stored → lifetime elapsed (7 days by default) → none: a refresh then fails', async () => {
    const clock = createFixedClock(Date.now())
    const past = await startTestService(backend, { clock })
    try {
      const user = await registerUser(past.app)
      clock.advance((7 * 86_400 + 1) * 1000)
      expect(decodeJwt(user.refreshToken).claims.exp * 1000).toBeLessThan(clock.now())
      expectError(await refresh(past, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    } finally {
      await past.close()
    }
  })

  it('R3.7 a refresh token works once: reuse in the same second fails, and of 50 concurrent uses exactly one succeeds', async () => {
    const user = await registerUser(service.app)
    const first = await refresh(service, user.refreshToken)
    const reuse = await refresh(service, user.refreshToken)
    expect(first.status).toBe(200)
    expect(decodeJwt(first.body.data.refresh_token).claims.iat).toBe(decodeJwt(user.refreshToken).claims.iat)
    expectError(reuse, 401, MESSAGES.refreshTokenInvalid)

    const other = await registerUser(service.app)
    const replies = await Promise.all(Array.from({ length: 50 }, () => refresh(service, other.refreshToken)))
    const statuses = replies.map((reply) => reply.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(49)
    const winner = replies.find((reply) => reply.status === 200)
    expect((await refresh(service, winner?.body.data.refresh_token)).status).toBe(200)
  })

  it('R3.8 access tokens are not stored: logout and refresh leave an issued access token valid until its exp', async () => {
    const user = await registerUser(service.app)
    expect((await refresh(service, user.refreshToken)).status).toBe(200)
    expect((await logout(service, user.accessToken)).status).toBe(200)
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(user.accessToken) })
    expect(me.status).toBe(200)
    expect(me.body.data.id).toBe(user.id)
  })
})
