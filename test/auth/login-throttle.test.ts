import { describe, expect, it } from 'vitest'
import {
  createLoginThrottle,
  LOGIN_THROTTLE_DEFAULTS,
  type LoginThrottleSettings,
} from '../../src/auth/login-throttle.js'
import { createFixedClock } from '../../src/clock.js'
import { RateLimitedError, StorageError } from '../../src/errors.js'
import { createMemoryLoginAttemptStore } from '../../src/storage/memory/memory-login-attempt-store.js'
import type { LoginAttemptStore } from '../../src/storage/stores.js'

const ADA = 'ada@example.com'
const SETTINGS: LoginThrottleSettings = { ...LOGIN_THROTTLE_DEFAULTS, addressFailuresPerMinute: 30 }

function throttled(settings: Partial<LoginThrottleSettings> = {}, store = createMemoryLoginAttemptStore()) {
  const clock = createFixedClock(Date.UTC(2026, 0, 1))
  const throttle = createLoginThrottle({
    store,
    fallback: createMemoryLoginAttemptStore(),
    settings: { ...SETTINGS, ...settings },
    clock,
  })
  /** Admits and fails (a wrong password), or reports the seconds of the RateLimitedError. */
  const fail = async (email: string, address: string): Promise<'failed' | number> => {
    try {
      await throttle.failed(await throttle.admit(email, address))
      return 'failed'
    } catch (error) {
      if (error instanceof RateLimitedError) return Number(error.headers['retry-after'])
      throw error
    }
  }
  return { throttle, clock, fail }
}

describe('createLoginThrottle', () => {
  it('failed attempts against one e-mail slow that e-mail down exponentially, from any address', async () => {
    const { clock, fail } = throttled()
    const outcomes = []
    for (let i = 0; i < 5; i++) outcomes.push(await fail(ADA, `198.51.100.${i}`))
    expect(outcomes).toEqual(['failed', 'failed', 'failed', 'failed', 'failed'])
    expect(await fail(ADA, '198.51.100.9')).toBe(1)
    clock.advance(1_000)
    expect(await fail(ADA, '198.51.100.9')).toBe('failed')
    expect(await fail(ADA, '198.51.100.10')).toBe(2)
    clock.advance(2_000)
    expect(await fail(ADA, '198.51.100.11')).toBe('failed')
    expect(await fail(ADA, '198.51.100.11')).toBe(4)
    // another account is not slowed down
    expect(await fail('bob@example.com', '198.51.100.9')).toBe('failed')
  })

  it('the wait grows to at most the maximum, and the failures are forgotten after an hour without one', async () => {
    const { clock, fail } = throttled()
    for (let i = 0; i < 5; i++) await fail(ADA, '198.51.100.1')
    let waited = 0
    for (let i = 0; i < 12; i++) {
      const wait = await fail(ADA, '198.51.100.1')
      expect(wait).not.toBe('failed')
      waited = wait as number
      clock.advance(waited * 1_000)
      expect(await fail(ADA, '198.51.100.1')).toBe('failed')
    }
    expect(waited).toBe(300)
    clock.advance(60 * 60_000)
    for (let i = 0; i < 5; i++) expect(await fail(ADA, '198.51.100.1')).toBe('failed')
  })

  it('an address that logged in to the account is not delayed by its backoff, for a few failures of its own', async () => {
    const { throttle, fail } = throttled()
    await throttle.succeeded(await throttle.admit(ADA, '203.0.113.5'))
    for (let i = 0; i < 10; i++) await fail(ADA, '198.51.100.1')
    expect(await fail(ADA, '198.51.100.2')).toEqual(expect.any(Number))
    const pass = await throttle.admit(ADA, '203.0.113.5')
    expect(pass.remembered).toBe(true)
    await throttle.succeeded(pass)
    // a remembered address that keeps failing loses the exemption
    for (let i = 0; i < 5; i++) expect(await fail(ADA, '203.0.113.5')).toBe('failed')
    expect(await fail(ADA, '203.0.113.5')).toEqual(expect.any(Number))
  })

  it('logins in a row from a remembered address renew its record once a minute, not at every login', async () => {
    const store = createMemoryLoginAttemptStore()
    const writes: number[] = []
    const observed: LoginAttemptStore = {
      ...store,
      remember: (key, now, keepMs) => {
        writes.push(now)
        return store.remember(key, now, keepMs)
      },
    }
    const { throttle, clock, fail } = throttled({}, observed)
    const start = clock.now()
    await throttle.remember(ADA, '203.0.113.5')
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000)
      const pass = await throttle.admit(ADA, '203.0.113.5')
      expect(pass.remembered).toBe(true)
      await throttle.succeeded(pass)
    }
    expect(writes).toEqual([start])
    clock.advance(10_000)
    await throttle.succeeded(await throttle.admit(ADA, '203.0.113.5'))
    expect(writes).toEqual([start, start + 60_000])
    // a failure is always cleared by the next success (R8.6: a success starts it afresh), within the minute too
    expect(await fail(ADA, '203.0.113.5')).toBe('failed')
    await throttle.succeeded(await throttle.admit(ADA, '203.0.113.5'))
    expect(writes).toEqual([start, start + 60_000, start + 60_000])
    for (let i = 0; i < 5; i++) expect(await fail(ADA, '203.0.113.5')).toBe('failed')
    for (let i = 0; i < 5; i++) await fail(ADA, '198.51.100.1')
    expect(await fail(ADA, '203.0.113.5')).toEqual(expect.any(Number))
    // another address of the account is written at its own first success
    await throttle.succeeded(await throttle.admit('bob@example.com', '203.0.113.5'))
    expect(writes).toHaveLength(4)
  })

  it('the address that registered the account is remembered for it', async () => {
    const { throttle, fail } = throttled()
    await throttle.remember(ADA, '203.0.113.5')
    for (let i = 0; i < 10; i++) await fail(ADA, '198.51.100.1')
    expect((await throttle.admit(ADA, '203.0.113.5')).remembered).toBe(true)
  })

  it('the per-address limit counts failures, not attempts: successes give their attempt back', async () => {
    const { throttle, clock, fail } = throttled({ addressFailuresPerMinute: 3, accountFreeFailures: 0 })
    for (let i = 0; i < 10; i++)
      await throttle.succeeded(await throttle.admit(`user${i}@example.com`, '192.0.2.1'))
    expect([
      await fail('x1@example.com', '192.0.2.1'),
      await fail('x2@example.com', '192.0.2.1'),
      await fail('x3@example.com', '192.0.2.1'),
      await fail('x4@example.com', '192.0.2.1'),
    ]).toEqual(['failed', 'failed', 'failed', 60])
    // another address is not limited; a minute after the last failure the address starts again
    expect(await fail('x4@example.com', '192.0.2.2')).toBe('failed')
    clock.advance(60_000)
    expect(await fail('x4@example.com', '192.0.2.1')).toBe('failed')
  })

  it('an attempt refused for the account is not a failure of the address', async () => {
    const { fail } = throttled({ addressFailuresPerMinute: 6 })
    for (let i = 0; i < 5; i++) await fail(ADA, '192.0.2.1')
    for (let i = 0; i < 10; i++) expect(await fail(ADA, '192.0.2.1')).toBe(1)
    expect(await fail('bob@example.com', '192.0.2.1')).toBe('failed')
    expect(await fail('carol@example.com', '192.0.2.1')).toBe(60)
  })

  it('with 0 and 0 nothing is limited', async () => {
    const { fail } = throttled({ addressFailuresPerMinute: 0, accountFreeFailures: 0 })
    for (let i = 0; i < 50; i++) expect(await fail(ADA, '192.0.2.1')).toBe('failed')
  })

  it('Redis down opens the door: no longer, a store that fails is replaced by counts in the process', async () => {
    const failing: LoginAttemptStore = new Proxy(createMemoryLoginAttemptStore(), {
      get: () => async () => {
        throw new StorageError('loginAttempts failed', { cause: new Error('ECONNREFUSED') })
      },
    })
    const { throttle, fail } = throttled({}, failing)
    const pass = await throttle.admit(ADA, '192.0.2.1')
    expect(pass.degraded).toBe(true)
    for (let i = 0; i < 4; i++) expect(await fail(ADA, '192.0.2.1')).toBe('failed')
    expect(await fail(ADA, '192.0.2.1')).toBe(1)
  })
})
