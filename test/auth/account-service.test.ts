import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Session } from '../../src/auth/account.js'
import { createAccountService } from '../../src/auth/account-service.js'
import { createArgon2Threads } from '../../src/auth/argon2-threads.js'
import { createConcurrencyLimiter } from '../../src/auth/concurrency-limiter.js'
import { createLoginThrottle, LOGIN_THROTTLE_DEFAULTS } from '../../src/auth/login-throttle.js'
import { createPasswordHasher, type PasswordHasher } from '../../src/auth/password-hasher.js'
import { createTokenService } from '../../src/auth/token-service.js'
import { systemClock } from '../../src/clock.js'
import { createEnvReader } from '../../src/config/env-reader.js'
import { readSessionConfig } from '../../src/config/session-config.js'
import type { Argon2Params } from '../../src/config.js'
import { loadConfig } from '../../src/config.js'
import {
  EmailTakenError,
  InvalidCredentialsError,
  RateLimitedError,
  StorageError,
  ValidationError,
} from '../../src/errors.js'
import { english } from '../../src/language/catalogues.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { createSessionService } from '../../src/sessions/session-service.js'
import { createMemoryLoginAttemptStore } from '../../src/storage/memory/memory-login-attempt-store.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { SessionStore, Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'

/** AUTH_SESSIONS and the reuse settings at their defaults: the specification's one session per user. */
const DEFAULT_SESSIONS = readSessionConfig(createEnvReader({}))

const cheap: Argon2Params = { memoryKiB: 1024, timeCost: 1, parallelism: 1 }
/** Shared by the suite; the threads do not keep the process alive. */
const threads = createArgon2Threads(2)
const tokenSettings = {
  secret: 'account-service-secret-0123456789',
  previousSecrets: [],
  accessTokenTtlSeconds: 900,
  refreshTokenTtlSeconds: 604_800,
}

/** The real hasher, with its calls recorded. */
function observedHasher(params: Argon2Params) {
  const real = createPasswordHasher(
    params,
    createConcurrencyLimiter({ concurrency: 2, queueLimit: 10 }),
    threads,
  )
  const calls: string[] = []
  const record = (name: string) => {
    calls.push(name)
  }
  const hasher: PasswordHasher = {
    hash(password) {
      record('hash')
      return real.hash(password)
    },
    verify(stored, password) {
      record('verify')
      return real.verify(stored, password)
    },
    verifyDummy(password) {
      record('verifyDummy')
      return real.verifyDummy(password)
    },
    needsRehash: (stored) => real.needsRehash(stored),
  }
  return { hasher, calls }
}

/** A call off HTTP: no client address, no request id. */
const offHttp = { clientAddress: null, requestId: null }
/** A call for a client at `address`, outside any HTTP request. */
const client = (address: string) => ({ clientAddress: address, requestId: null })

describe.each(backends)('createAccountService [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  const warnings: Array<Record<string, unknown>> = []
  const log = { warn: (fields: Record<string, unknown>) => void warnings.push(fields) }
  const recorded: SecurityEvent[] = []
  const events = { record: (event: SecurityEvent) => void recorded.push(event) }

  beforeEach(async () => {
    instance = await backend.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    warnings.length = 0
    recorded.length = 0
  })
  afterEach(async () => {
    await stores.close()
    await instance.teardown()
  })

  const service = (hasher: PasswordHasher) =>
    createAccountService({
      users: stores.users,
      sessions: stores.sessions,
      sessionConfig: DEFAULT_SESSIONS,
      hasher,
      tokens: createTokenService(tokenSettings, systemClock),
      clock: systemClock,
      log,
      events,
      throttle: createLoginThrottle({
        store: createMemoryLoginAttemptStore(),
        fallback: null,
        settings: { ...LOGIN_THROTTLE_DEFAULTS, addressFailuresPerMinute: 0 },
        clock: systemClock,
      }),
    })

  it('an unknown e-mail still costs an Argon2 verification (of a dummy hash)', async () => {
    const { hasher, calls } = observedHasher(cheap)
    await expect(
      service(hasher).login({ email: 'nobody@example.com', password: 'whatever1' }, client('192.0.2.1')),
    ).rejects.toBeInstanceOf(InvalidCredentialsError)
    expect(calls).toEqual(['verifyDummy'])
    expect(warnings).toEqual([{ event: 'login_failed', reason: 'unknown_email', clientAddress: '192.0.2.1' }])
  })

  it('a wrong password is logged with the user id and client address', async () => {
    const { hasher } = observedHasher(cheap)
    const accounts = service(hasher)
    await accounts.register({ email: 'ada@example.com', password: 'correct horse' }, offHttp)
    const user = await stores.users.findByEmail('ada@example.com')
    await expect(
      accounts.login({ email: 'ada@example.com', password: 'wrong horse' }, client('192.0.2.7')),
    ).rejects.toBeInstanceOf(InvalidCredentialsError)
    expect(warnings).toEqual([
      { event: 'login_failed', reason: 'wrong_password', userId: user?.id, clientAddress: '192.0.2.7' },
    ])
  })

  it('records each security event with the request context, never a secret or the e-mail', async () => {
    const accounts = service(observedHasher(cheap).hasher)
    const context = (n: number, address = '198.51.100.4') => ({
      clientAddress: address,
      requestId: `req-${n}`,
    })
    const email = 'ada@example.com'
    const { tokens } = await accounts.register({ email, password: 'correct horse' }, context(1))
    const user = await stores.users.findByEmail(email)
    const id = user?.id ?? ''
    const failing = (password: string, n: number, address = '198.51.100.4') =>
      accounts.login({ email, password }, context(n, address)).catch((error) => error)
    expect(await failing('wrong horse', 2)).toBeInstanceOf(InvalidCredentialsError)
    expect(
      await accounts
        .login({ email: 'nobody@example.com', password: 'whatever1' }, context(3))
        .catch((error) => error),
    ).toBeInstanceOf(InvalidCredentialsError)
    await accounts.login({ email, password: 'correct horse' }, context(4))
    const fresh = await accounts.refresh(tokens.refreshToken, context(5)).catch((error) => error)
    // the login replaced the registration's token: reused
    expect(fresh).toBeInstanceOf(Error)
    await expect(accounts.refresh('not.a.token', context(6))).rejects.toBeInstanceOf(Error)
    const session = (await accounts.login({ email, password: 'correct horse' }, context(7))) as Session
    await accounts.refresh(session.tokens.refreshToken, context(8))
    const sessionService = createSessionService({
      store: stores.sessions,
      users: stores.users,
      clock: systemClock,
      events,
      mode: 'single',
    })
    await sessionService.logout({ userId: id, sessionId: null, sessionTag: null }, 'current', context(9))
    // five wrong passwords from an address the account does not know, then the throttle refuses before any check
    for (let n = 10; n < 15; n++) await failing('wrong horse', n, '203.0.113.9')
    expect(await failing('correct horse', 15, '203.0.113.9')).toBeInstanceOf(RateLimitedError)

    const seen = recorded.map((event) => [event.type, event.userId, event.requestId, event.reason])
    expect(seen).toEqual([
      ['registered', id, 'req-1', null],
      ['login_failed', id, 'req-2', 'wrong_password'],
      ['login_failed', null, 'req-3', 'unknown_email'],
      ['login_succeeded', id, 'req-4', null],
      ['refresh_refused', id, 'req-5', 'reused'],
      ['refresh_refused', null, 'req-6', 'invalid'],
      ['login_succeeded', id, 'req-7', null],
      ['refresh_succeeded', id, 'req-8', null],
      ['logout', id, 'req-9', null],
      ...[10, 11, 12, 13, 14].map((n) => ['login_failed', id, `req-${n}`, 'wrong_password']),
      ['login_failed', null, 'req-15', 'throttled'],
    ])
    // each event names its context's address
    expect(recorded.map((event) => event.clientAddress)).toEqual([
      ...Array<string>(9).fill('198.51.100.4'),
      ...Array<string>(6).fill('203.0.113.9'),
    ])
    for (const event of recorded) expect(event.at).toBeGreaterThan(Date.now() - 60_000)
    const text = JSON.stringify(recorded)
    for (const secret of [
      'correct horse',
      'wrong horse',
      email,
      tokens.refreshToken,
      session.tokens.accessToken,
    ]) {
      expect(text).not.toContain(secret)
    }
  })

  it('a replaced refresh token sent again and again: its first return is reused, every later one replayed', async () => {
    const accounts = service(observedHasher(cheap).hasher)
    const { tokens } = await accounts.register(
      { email: 'ada@example.com', password: 'correct horse' },
      offHttp,
    )
    const other = await accounts.register({ email: 'bob@example.com', password: 'correct horse' }, offHttp)
    await accounts.refresh(tokens.refreshToken, offHttp)
    await accounts.refresh(other.tokens.refreshToken, offHttp)
    recorded.length = 0
    for (let i = 0; i < 3; i++) await expect(accounts.refresh(tokens.refreshToken, offHttp)).rejects.toThrow()
    // another token's first return is its own reuse
    await expect(accounts.refresh(other.tokens.refreshToken, offHttp)).rejects.toThrow()
    expect(recorded.map((event) => [event.type, event.reason])).toEqual([
      ['refresh_refused', 'reused'],
      ['refresh_refused', 'replayed'],
      ['refresh_refused', 'replayed'],
      ['refresh_refused', 'reused'],
    ])
    expect(new Set(recorded.map((event) => event.userId)).size).toBe(2)
  })

  it('off HTTP an event names no request, and no address unless the context gives one', async () => {
    const accounts = service(observedHasher(cheap).hasher)
    const { tokens } = await accounts.register(
      { email: 'ada@example.com', password: 'correct horse' },
      offHttp,
    )
    await accounts.refresh(tokens.refreshToken, offHttp)
    await accounts.login({ email: 'ada@example.com', password: 'correct horse' }, client('192.0.2.7'))
    expect(recorded.map((event) => [event.type, event.clientAddress, event.requestId])).toEqual([
      ['registered', null, null],
      ['refresh_succeeded', null, null],
      ['login_succeeded', '192.0.2.7', null],
    ])
  })

  it('re-hashes the password on a successful login after the Argon2 parameters change', async () => {
    await service(observedHasher(cheap).hasher).register(
      { email: 'ada@example.com', password: 'correct horse' },
      offHttp,
    )
    const before = await stores.users.findByEmail('ada@example.com')
    expect(before?.passwordHash).toMatch(/m=1024,t=1,p=1/)

    const stronger = observedHasher({ ...cheap, memoryKiB: 2048, timeCost: 2 })
    await service(stronger.hasher).login({ email: 'ada@example.com', password: 'correct horse' }, client('x'))
    expect(stronger.calls).toEqual(['verify', 'hash'])
    const after = await stores.users.findByEmail('ada@example.com')
    expect(after?.passwordHash).toMatch(/m=2048,t=2,p=1/)

    // the new hash verifies, and an unchanged configuration does not re-hash again
    const same = observedHasher({ ...cheap, memoryKiB: 2048, timeCost: 2 })
    await service(same.hasher).login({ email: 'ada@example.com', password: 'correct horse' }, client('x'))
    expect(same.calls).toEqual(['verify'])
  })

  it('register checks the e-mail before spending an Argon2 hash on a taken one', async () => {
    const { hasher, calls } = observedHasher(cheap)
    const accounts = service(hasher)
    await accounts.register({ email: 'ada@example.com', password: 'correct horse' }, offHttp)
    calls.length = 0
    await expect(
      accounts.register({ email: 'ADA@example.com', password: 'other horse' }, offHttp),
    ).rejects.toBeInstanceOf(EmailTakenError)
    expect(calls).toEqual([])
  })

  it('validates its input without the HTTP layer, with the messages of the request schema', async () => {
    const { hasher, calls } = observedHasher(cheap)
    const accounts = service(hasher)
    const refusal = (email: string, password: string) =>
      accounts.register({ email, password }, offHttp).then(
        () => expect.unreachable('registered'),
        (error: unknown) => {
          expect(error).toBeInstanceOf(ValidationError)
          return (error as ValidationError).envelopeData(english).errors
        },
      )
    expect(await refusal('nope', 'correct horse')).toEqual([
      { field: '/email', message: 'must be a valid e-mail address' },
    ])
    const passwordRule = [
      { field: '/password', message: 'must have 8 to 100 characters of well-formed Unicode' },
    ]
    for (const password of ['short', '😀'.repeat(7), 'a'.repeat(101), 'abcdefgh\ud800']) {
      expect(await refusal('a@example.com', password)).toEqual(passwordRule)
    }
    expect(calls).toEqual([])
  })

  it('a wrong password of any length is a wrong password (401), not a refused one', async () => {
    const accounts = service(observedHasher(cheap).hasher)
    await accounts.register({ email: 'ada@example.com', password: 'correct horse' }, offHttp)
    for (const password of ['wrong', 'x', 'a'.repeat(100)]) {
      await expect(
        accounts.login({ email: 'ada@example.com', password }, client('192.0.2.7')),
      ).rejects.toBeInstanceOf(InvalidCredentialsError)
    }
  })
  it('Redis down opens the door: no longer, while a store fails a right and a wrong password answer alike', async () => {
    let failing = false
    const sessions = stores.sessions
    const starts: SessionStore = {
      ...sessions,
      start: (session, limit, now) =>
        failing
          ? Promise.reject(new StorageError('sessions.start failed', { cause: new Error('ECONNREFUSED') }))
          : sessions.start(session, limit, now),
    }
    const accounts = createAccountService({
      users: stores.users,
      sessions: starts,
      sessionConfig: DEFAULT_SESSIONS,
      hasher: observedHasher(cheap).hasher,
      tokens: createTokenService(tokenSettings, systemClock),
      clock: systemClock,
      log,
      events,
      throttle: createLoginThrottle({
        store: createMemoryLoginAttemptStore(),
        fallback: null,
        settings: { ...LOGIN_THROTTLE_DEFAULTS, addressFailuresPerMinute: 0, accountFreeFailures: 0 },
        clock: systemClock,
      }),
    })
    await accounts.register({ email: 'ada@example.com', password: 'correct horse' }, offHttp)
    const outcome = (password: string) =>
      accounts.login({ email: 'ada@example.com', password }, client('192.0.2.7')).then(
        () => 'logged in',
        (error: unknown) =>
          error instanceof StorageError ? `StorageError: ${error.message}` : String(error),
      )
    failing = true
    const right = await outcome('correct horse')
    expect(right).toMatch(/^StorageError/)
    expect(await outcome('wrong horse')).toBe(right)
    // until a login completes again, a wrong password keeps the answer of a failing store
    failing = false
    expect(await outcome('wrong horse')).toBe(right)
    expect(await outcome('correct horse')).toBe('logged in')
    expect(await outcome('wrong horse')).toMatch(/InvalidCredentialsError/)
  })

  it('a login refused by the throttle costs no Argon2 work', async () => {
    const { hasher, calls } = observedHasher(cheap)
    const accounts = service(hasher)
    const login = () =>
      accounts.login({ email: 'ada@example.com', password: 'wrong horse' }, client('192.0.2.7'))
    for (let i = 0; i < LOGIN_THROTTLE_DEFAULTS.accountFreeFailures; i++)
      await expect(login()).rejects.toBeInstanceOf(InvalidCredentialsError)
    calls.length = 0
    await expect(login()).rejects.toBeInstanceOf(RateLimitedError)
    expect(calls).toEqual([])
  })
})
