import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backends } from '../support/backends.js'
import { call, expectError, PASSWORD, registerUser, uniqueEmail } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

// docs/api.md section 8: the limits that answer 429 and 503, and the client address requests are counted by.
describe.each(backends)('R8 limits [$name]', (backend) => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService(backend)
  })
  afterAll(() => service.close())

  it('R8.1 RATE_LIMIT_PER_MINUTE limits each of register, login and refresh per client address with a 429 envelope', async () => {
    const limited = await startTestService(backend, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
    try {
      const body = { email: uniqueEmail(), password: PASSWORD }
      const replies = []
      for (let i = 0; i < 3; i++) replies.push(await call(limited.app, 'POST', '/auth/login', { body }))
      expect(replies.map((reply) => reply.status)).toEqual([401, 401, 429])
      expect(replies[0]?.headers['x-ratelimit-limit']).toBe('2')
      expect(replies[0]?.headers['x-ratelimit-remaining']).toBe('1')
      expect(Number(replies[0]?.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
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

  it('R8.2 past the Argon2 queue a request gets a 503 envelope with Retry-After: 1, and the others succeed', async () => {
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

  describe('R8.3 the client address', () => {
    const failedLoginAddress = async (target: TestService, headers: Record<string, string>) => {
      const user = await registerUser(target.app)
      await call(target.app, 'POST', '/auth/login', {
        body: { email: user.email, password: 'wrong pass' },
        headers,
      })
      return target.logs().find((record) => record.event === 'login_failed' && record.userId === user.id)
        ?.clientAddress
    }

    it('R8.3 is the socket peer, unless the peer is a proxy named in TRUST_PROXY: then X-Forwarded-For', async () => {
      expect(await failedLoginAddress(service, { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.1')
      const proxied = await startTestService(backend, { env: { TRUST_PROXY: '127.0.0.1' } })
      try {
        expect(await failedLoginAddress(proxied, { 'x-forwarded-for': '203.0.113.9' })).toBe('203.0.113.9')
      } finally {
        await proxied.close()
      }
    })
  })
})
