import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { bearer, call, PASSWORD, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md R1.1 and R1.2, the envelope of src/http/envelope.ts.
describe('envelope: one shape for every auth answer and every error', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backends[0]!)
  })
  afterAll(() => service.close())

  it('R1.1 register, login, refresh, logout and me answer {code: 200, message: "Success", data} and nothing else', async () => {
    const email = uniqueEmail()
    const register = await call(service.app, 'POST', '/auth/register', {
      body: { email, password: PASSWORD },
    })
    const login = await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })
    const refresh = await call(service.app, 'POST', '/auth/refresh', {
      body: { refresh_token: login.body.data.refresh_token },
    })
    const me = await call(service.app, 'GET', '/auth/me', { headers: bearer(refresh.body.data.access_token) })
    const logout = await call(service.app, 'POST', '/auth/delete-refresh-token', {
      headers: bearer(refresh.body.data.access_token),
    })
    // every answer that logs in shows the account as GET /auth/me does, beside the tokens
    const account = [
      'avatar_url',
      'bio',
      'created_at',
      'email',
      'email_verified',
      'id',
      'nickname',
      'password_set',
      'providers',
      'role',
      'status',
      'updated_at',
      'username',
    ]
    const loginAnswer = [...account, 'access_token', 'refresh_token'].sort()
    expect(Object.keys(register.body.data).sort()).toEqual(loginAnswer)
    expect(Object.keys(login.body.data).sort()).toEqual(loginAnswer)
    expect(Object.keys(refresh.body.data).sort()).toEqual(['access_token', 'refresh_token'])
    expect(Object.keys(me.body.data).sort()).toEqual(account)
    expect(logout.body.data).toBeNull()
    for (const reply of [register, login, refresh, me, logout]) {
      expect(reply.status).toBe(200)
      expect(reply.headers['content-type']).toMatch(/^application\/json/)
      expect(Object.keys(reply.body).sort()).toEqual(['code', 'data', 'message'])
      expect(reply.body.code).toBe(200)
      expect(reply.body.message).toBe('Success')
    }
  })

  it('R1.2 every error is JSON {code: <status>, message, data: null}, whatever produced it', async () => {
    const replies = [
      await call(service.app, 'GET', '/nowhere'),
      await call(service.app, 'PUT', '/auth/login'),
      await call(service.app, 'POST', '/auth/login', {
        body: '{',
        headers: { 'content-type': 'application/json' },
      }),
      await call(service.app, 'POST', '/auth/login', {
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
      await call(service.app, 'POST', '/auth/login', { body: { email: uniqueEmail(), password: PASSWORD } }),
      await call(service.app, 'GET', '/auth/me'),
    ]
    expect(replies.map((reply) => reply.status)).toEqual([404, 405, 400, 415, 401, 401])
    for (const reply of replies) {
      expect(reply.headers['content-type']).toMatch(/^application\/json/)
      expect(reply.body).toEqual({ code: reply.status, message: expect.any(String), data: null })
      expect(reply.body.message).not.toBe('')
    }
  })
})
