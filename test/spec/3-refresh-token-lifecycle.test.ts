import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import { bearer, call, decodeJwt, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

const refresh = (service: TestService, token: string) =>
  call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })

describe.each(backends)('spec 3: lifecycle of the stored refresh token [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  it('none → register → stored (new token); a token pair is returned', async () => {
    const reply = await call(service.app, 'POST', '/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD },
    })
    expect(reply.status).toBe(200)
    expect(decodeJwt(reply.body.data.access_token).claims.token_type).toBe('Access')
    // the refresh token returned is the stored one
    expect((await refresh(service, reply.body.data.refresh_token)).status).toBe(200)
  })

  it('none → login (credentials valid) → stored; a token pair is returned', async () => {
    const user = await registerUser(service.app)
    await call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(user.accessToken) })
    const login = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: PASSWORD },
    })
    expect(login.status).toBe(200)
    expect((await refresh(service, login.body.data.refresh_token)).status).toBe(200)
  })

  it('stored → login (credentials valid) → stored: the new token replaces the earlier one', async () => {
    const user = await registerUser(service.app)
    const login = await call(service.app, 'POST', '/auth/login', {
      body: { email: user.email, password: PASSWORD },
    })
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await refresh(service, login.body.data.refresh_token)).status).toBe(200)
  })

  it('stored → refresh (valid, type Refresh, not expired, in store) → stored (new); old deleted at once; new pair', async () => {
    const user = await registerUser(service.app)
    const first = await refresh(service, user.refreshToken)
    expect(first.status).toBe(200)
    const { access_token, refresh_token } = first.body.data
    expect(decodeJwt(access_token).claims).toMatchObject({ sub: user.id, token_type: 'Access' })
    expect(decodeJwt(refresh_token).claims).toMatchObject({ sub: user.id, token_type: 'Refresh' })
    expect(refresh_token).not.toBe(user.refreshToken)
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
    expect((await refresh(service, refresh_token)).status).toBe(200)
  })

  it('stored → refresh with an invalid, expired or unknown token → 401, and the stored token is unchanged', async () => {
    const user = await registerUser(service.app)
    const [header, claims] = user.refreshToken.split('.')
    const forged = `${header}.${claims}.${'A'.repeat(43)}`
    for (const bad of [forged, 'not-a-jwt', `${user.refreshToken}x`]) {
      expectError(await refresh(service, bad), 401, MESSAGES.refreshTokenInvalid)
    }
    expect((await refresh(service, user.refreshToken)).status).toBe(200)
  })

  it('stored → delete-refresh-token with a valid access token → none; 200', async () => {
    const user = await registerUser(service.app)
    const logout = await call(service.app, 'POST', '/auth/delete-refresh-token', {
      headers: bearer(user.accessToken),
    })
    expect(logout.status).toBe(200)
    expect(logout.body).toEqual({ code: 200, message: 'Success', data: null })
    expectError(await refresh(service, user.refreshToken), 401, MESSAGES.refreshTokenInvalid)
  })

  it('stored → lifetime elapsed (7 days by default) → none: a refresh attempt then fails', async () => {
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

  it('a refresh token can be used once: reuse of a rotated token within the same second fails', async () => {
    const user = await registerUser(service.app)
    const first = await refresh(service, user.refreshToken)
    const reuse = await refresh(service, user.refreshToken)
    expect(first.status).toBe(200)
    expect(decodeJwt(first.body.data.refresh_token).claims.iat).toBe(decodeJwt(user.refreshToken).claims.iat)
    expectError(reuse, 401, MESSAGES.refreshTokenInvalid)
  })

  it('50 concurrent refreshes with one token: exactly one 200, the rest 401', async () => {
    const user = await registerUser(service.app)
    const replies = await Promise.all(Array.from({ length: 50 }, () => refresh(service, user.refreshToken)))
    const statuses = replies.map((reply) => reply.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(49)
    const winner = replies.find((reply) => reply.status === 200)
    expect((await refresh(service, winner?.body.data.refresh_token)).status).toBe(200)
  })
})
