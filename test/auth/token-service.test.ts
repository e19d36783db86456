import { createHmac } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTokenService, refreshTokenDigest } from '../../src/auth/token-service.js'
import { createFixedClock } from '../../src/clock.js'
import { AccessTokenInvalidError, RefreshTokenInvalidError, TokenWrongTypeError } from '../../src/errors.js'

const SECRET = 'current-secret-current-secret-00'
const settings = {
  secret: SECRET,
  previousSecrets: [],
  accessTokenTtlSeconds: 900,
  refreshTokenTtlSeconds: 604_800,
}
const USER = '4821039576'

describe('createTokenService', () => {
  it('issues an Access and a Refresh token dated by the clock', () => {
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    const pair = tokens.issuePair(USER)
    const issuedAt = Math.floor(clock.now() / 1000)
    expect(pair.refreshExpiresAt).toBe((issuedAt + 604_800) * 1000)
    expect(tokens.verifyAccess(pair.accessToken)).toBe(USER)
    expect(tokens.verifyRefresh(pair.refreshToken)).toBe(USER)
  })

  it('refuses each type where the other belongs', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const pair = tokens.issuePair(USER)
    expect(() => tokens.verifyAccess(pair.refreshToken)).toThrow(TokenWrongTypeError)
    expect(() => tokens.verifyRefresh(pair.accessToken)).toThrow(TokenWrongTypeError)
  })

  it('has no leeway: a token is refused from its exp second on', () => {
    const ttl = 60
    const issuedAt = Math.floor(Date.now() / 1000) - ttl
    const tokens = createTokenService(
      { ...settings, accessTokenTtlSeconds: ttl },
      createFixedClock(issuedAt * 1000),
    )
    expect(() => tokens.verifyAccess(tokens.issuePair(USER).accessToken)).toThrow(AccessTokenInvalidError)
    const fresh = createTokenService(
      { ...settings, accessTokenTtlSeconds: ttl },
      createFixedClock((issuedAt + 2) * 1000),
    )
    expect(fresh.verifyAccess(fresh.issuePair(USER).accessToken)).toBe(USER)
  })

  it('verifies with previous secrets but signs only with the current one', () => {
    const old = createTokenService(
      { ...settings, secret: 'old-secret-old-secret-old-secret' },
      createFixedClock(Date.now()),
    )
    const current = createTokenService(
      { ...settings, previousSecrets: ['old-secret-old-secret-old-secret'] },
      createFixedClock(Date.now()),
    )
    const withoutPrevious = createTokenService(settings, createFixedClock(Date.now()))
    const oldPair = old.issuePair(USER)
    expect(current.verifyAccess(oldPair.accessToken)).toBe(USER)
    expect(() => withoutPrevious.verifyAccess(oldPair.accessToken)).toThrow(AccessTokenInvalidError)
    expect(() => old.verifyAccess(current.issuePair(USER).accessToken)).toThrow(AccessTokenInvalidError)
  })

  it('refuses tokens whose claims do not have the shape it issues', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const now = Math.floor(Date.now() / 1000)
    // signed by hand: fast-jwt's signer itself refuses some of these shapes
    const sign = (claims: Record<string, unknown>) => {
      const encode = (part: unknown) => Buffer.from(JSON.stringify(part)).toString('base64url')
      const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`
      return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`
    }
    const base = { sub: USER, token_type: 'Refresh', iat: now, exp: now + 60, jti: 'a' }
    for (const claims of [
      { ...base, sub: '12' },
      { ...base, sub: 4821039576 },
      { ...base, token_type: 'refresh' },
      { ...base, jti: undefined },
      { ...base, exp: now + 60.5 },
    ]) {
      expect(() => tokens.verifyRefresh(sign(claims))).toThrow(RefreshTokenInvalidError)
    }
    expect(tokens.verifyRefresh(sign(base))).toBe(USER)
  })
})

describe('remembered access tokens', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('no leeway at the boundary: at exp * 1000 a token is refused, remembered or not', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const start = Date.now()
    const tokens = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, { now: () => Date.now() })
    const { accessToken } = tokens.issuePair(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    vi.setSystemTime(Math.floor(start / 1000) * 1000 + 60_000)
    expect(() => tokens.verifyAccess(accessToken)).toThrow(AccessTokenInvalidError)
    // and at that very millisecond a service that has never seen the token refuses it too
    const unseen = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, { now: () => Date.now() })
    expect(() => unseen.verifyAccess(accessToken)).toThrow(AccessTokenInvalidError)
  })

  it('a remembered token vouches for no other: one changed character is refused', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const { accessToken } = tokens.issuePair(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    const last = accessToken.at(-1) === 'A' ? 'B' : 'A'
    expect(() => tokens.verifyAccess(`${accessToken.slice(0, -1)}${last}`)).toThrow(AccessTokenInvalidError)
    expect(() => tokens.verifyAccess(`${accessToken}x`)).toThrow(AccessTokenInvalidError)
  })
})

describe('refreshTokenDigest', () => {
  it('is the SHA-256 hex of the token', () => {
    expect(refreshTokenDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
