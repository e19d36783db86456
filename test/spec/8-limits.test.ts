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

  it('R8.1 RATE_LIMIT_PER_MINUTE limits each of register and refresh per client address with a 429 envelope', async () => {
    const limited = await startTestService(backend, { env: { RATE_LIMIT_PER_MINUTE: '2' } })
    try {
      const body = { refresh_token: 'not-a-token' }
      const replies = []
      for (let i = 0; i < 3; i++) replies.push(await call(limited.app, 'POST', '/auth/refresh', { body }))
      expect(replies.map((reply) => reply.status)).toEqual([401, 401, 429])
      expect(replies[0]?.headers['x-ratelimit-limit']).toBe('2')
      expect(replies[0]?.headers['x-ratelimit-remaining']).toBe('1')
      expect(Number(replies[0]?.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
      const reply = await call(limited.app, 'POST', '/auth/refresh', { body })
      expectError(reply, 429, MESSAGES.rateLimited)
      expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0)
      // another endpoint keeps its own budget; status endpoints are not limited
      const registered = await call(limited.app, 'POST', '/auth/register', {
        body: { email: uniqueEmail(), password: PASSWORD },
      })
      expect(registered.status).toBe(200)
      expect(registered.headers['x-ratelimit-remaining']).toBe('1')
      for (let i = 0; i < 5; i++) expect((await call(limited.app, 'GET', '/health')).status).toBe(200)
    } finally {
      await limited.close()
    }
  })

  it('R8.4 one noisy address does not shut out everyone behind it: 30 failures, then a correct login of another user from the same address is served', async () => {
    // RATE_LIMIT_PER_MINUTE as configured by default
    const limited = await startTestService(backend, { env: { RATE_LIMIT_PER_MINUTE: '30' } })
    try {
      const colleague = await registerUser(limited.app)
      const failures = []
      for (let i = 0; i < 30; i++) {
        const body = { email: uniqueEmail(), password: 'wrong password' }
        failures.push((await call(limited.app, 'POST', '/auth/login', { body })).status)
      }
      expect(failures).toEqual(Array(30).fill(401))
      // the address has used its failures: a further unknown attempt is refused before any password check
      const refused = await call(limited.app, 'POST', '/auth/login', {
        body: { email: uniqueEmail(), password: 'wrong password' },
      })
      expectError(refused, 429, MESSAGES.rateLimited)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      // a user who logged in from this address before is still served (R8.6), and successes cost no budget
      for (let i = 0; i < 3; i++) {
        const login = await call(limited.app, 'POST', '/auth/login', {
          body: { email: colleague.email, password: PASSWORD },
        })
        expect(login.status, login.text).toBe(200)
      }
    } finally {
      await limited.close()
    }
  })

  it('R8.4 successes do not count: 40 correct logins from one address are all served', async () => {
    const limited = await startTestService(backend, { env: { RATE_LIMIT_PER_MINUTE: '30' } })
    try {
      const users = [await registerUser(limited.app), await registerUser(limited.app)]
      for (let i = 0; i < 40; i++) {
        const user = users[i % 2] as (typeof users)[number]
        const login = await call(limited.app, 'POST', '/auth/login', {
          body: { email: user.email, password: PASSWORD },
        })
        expect(login.status).toBe(200)
      }
    } finally {
      await limited.close()
    }
  })

  it('R8.5 failed logins against one e-mail slow that e-mail down, from every address, before any Argon2 work', async () => {
    const proxied = await startTestService(backend, { env: { TRUST_PROXY: '127.0.0.1' } })
    try {
      const user = await registerUser(proxied.app)
      const guess = (address: string, password = 'wrong password') =>
        call(proxied.app, 'POST', '/auth/login', {
          body: { email: user.email, password },
          headers: { 'x-forwarded-for': address },
        })
      const statuses = []
      for (let i = 0; i < 5; i++) statuses.push((await guess(`198.51.100.${i}`)).status)
      expect(statuses).toEqual([401, 401, 401, 401, 401])
      const refused = await guess('198.51.100.99')
      expectError(refused, 429, MESSAGES.rateLimited)
      expect(refused.headers['retry-after']).toBe('1')
      // refused before the password is checked: the right password from a new address waits too
      expect((await guess('198.51.100.100', PASSWORD)).status).toBe(429)
      expect(proxied.logs().filter((record) => record.event === 'login_failed')).toHaveLength(5)
      // R8.6: the address the account was registered and logged in from is not delayed
      expect(
        (await call(proxied.app, 'POST', '/auth/login', { body: { email: user.email, password: PASSWORD } }))
          .status,
      ).toBe(200)
    } finally {
      await proxied.close()
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
