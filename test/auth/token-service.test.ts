import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createTokenService, refreshTokenDigest } from '../../src/auth/token-service.js'
import { createFixedClock } from '../../src/clock.js'
import { AccessTokenInvalidError, RefreshTokenInvalidError, TokenWrongTypeError } from '../../src/errors.js'
import { sessionTag } from '../../src/sessions/session-tag.js'

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

  it('has no leeway: a token is refused from its exp second on, by the injected clock', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1, 12, 0, 0, 500))
    const tokens = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, clock)
    const pair = tokens.issuePair(USER)
    // the clock, not the system time, decides: in 2030 the token is fresh, whatever today's date
    clock.advance(59_499)
    expect(tokens.verifyRefresh(pair.refreshToken)).toBe(USER)
    const unremembered = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, clock)
    expect(unremembered.verifyAccess(pair.accessToken)).toBe(USER)
    clock.advance(1)
    expect(() => unremembered.verifyAccess(pair.accessToken)).toThrow(AccessTokenInvalidError)
  })

  it('refuses a token whose clock time has not come (nbf), by the injected clock', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    const tokens = createTokenService(settings, clock)
    const now = Math.floor(clock.now() / 1000)
    const claims = { sub: USER, token_type: 'Access', iat: now, exp: now + 60, jti: 'a', nbf: now + 10 }
    expect(() => tokens.verifyAccess(signByHand(claims))).toThrow(AccessTokenInvalidError)
    clock.advance(10_000)
    expect(tokens.verifyAccess(signByHand(claims))).toBe(USER)
  })

  it('R5.5.5 refuses a token whose iat lies in the future, by the injected clock and with no leeway', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    const tokens = createTokenService(settings, clock)
    const now = Math.floor(clock.now() / 1000)
    const future = { sub: USER, token_type: 'Access', iat: now + 1, exp: now + 60, jti: 'a' }
    expect(() => tokens.verifyAccess(signByHand(future))).toThrow(AccessTokenInvalidError)
    const refresh = { ...future, token_type: 'Refresh', iat: now + 3600, exp: now + 7200 }
    expect(() => tokens.verifyRefresh(signByHand(refresh))).toThrow(RefreshTokenInvalidError)
    // from the second of iat on, the same token is good
    clock.advance(1_000)
    expect(tokens.verifyAccess(signByHand(future))).toBe(USER)
  })

  it('R5.5.5 refuses a token whose exp is absurd: 1e300, or more than its lifetime after iat', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1))
    const tokens = createTokenService(settings, clock)
    const now = Math.floor(clock.now() / 1000)
    const access = { sub: USER, token_type: 'Access', iat: now, jti: 'a' }
    const refresh = { ...access, token_type: 'Refresh' }
    for (const exp of [1e300, Number.MAX_SAFE_INTEGER + 1, now + 901, now + 10 * 365 * 86_400]) {
      expect(() => tokens.verifyAccess(signByHand({ ...access, exp }))).toThrow(AccessTokenInvalidError)
    }
    for (const exp of [1e300, now + 604_801]) {
      expect(() => tokens.verifyRefresh(signByHand({ ...refresh, exp }))).toThrow(RefreshTokenInvalidError)
    }
    // exactly the configured lifetimes are what the service issues
    expect(tokens.verifyAccess(signByHand({ ...access, exp: now + 900 }))).toBe(USER)
    expect(tokens.verifyRefresh(signByHand({ ...refresh, exp: now + 604_800 }))).toBe(USER)
    // an access lifetime is not enough for a refresh token, and the other way round
    expect(() => tokens.verifyAccess(signByHand({ ...access, exp: now + 604_800 }))).toThrow(
      AccessTokenInvalidError,
    )
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
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    const now = Math.floor(clock.now() / 1000)
    const sign = (claims: Record<string, unknown>) => signByHand(claims)
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
  it('no leeway at the boundary: at exp * 1000 a token is refused, remembered or not', () => {
    const clock = createFixedClock(Date.UTC(2030, 0, 1, 12, 0, 0, 250))
    const tokens = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, clock)
    const { accessToken } = tokens.issuePair(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    clock.set(Date.UTC(2030, 0, 1, 12, 1, 0, 0))
    expect(() => tokens.verifyAccess(accessToken)).toThrow(AccessTokenInvalidError)
    // and at that very millisecond a service that has never seen the token refuses it too
    const unseen = createTokenService({ ...settings, accessTokenTtlSeconds: 60 }, clock)
    expect(() => unseen.verifyAccess(accessToken)).toThrow(AccessTokenInvalidError)
  })

  it('a remembered token vouches for no other: one changed character is refused', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const { accessToken } = tokens.issuePair(USER)
    expect(tokens.verifyAccess(accessToken)).toBe(USER)
    // the signature's first character: all six of its bits are signature bits, so any change alters the HMAC
    const signatureStart = accessToken.lastIndexOf('.') + 1
    const first = accessToken.charAt(signatureStart)
    const changed = `${accessToken.slice(0, signatureStart)}${first === 'A' ? 'B' : 'A'}${accessToken.slice(signatureStart + 1)}`
    expect(() => tokens.verifyAccess(changed)).toThrow(AccessTokenInvalidError)
    expect(() => tokens.verifyAccess(`${accessToken}x`)).toThrow(AccessTokenInvalidError)
  })
})

describe('one token, one text', () => {
  // tokens made by hand are dated by this clock too: Date.now() read later may be a second past it
  const clock = createFixedClock(Date.now())
  const tokens = createTokenService(settings, clock)

  /** The other characters that decode to the same bytes as `last` when they end a part of this length. */
  const sameBytesAs = (last: string, spareBits: number): string[] => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const value = alphabet.indexOf(last)
    const mask = (1 << spareBits) - 1
    return [...alphabet].filter((c, i) => c !== last && (i & ~mask) === (value & ~mask))
  }

  it('refuses a signature whose spare bits are set: every other text of the same HMAC', () => {
    for (let round = 0; round < 20; round++) {
      const { accessToken, refreshToken } = tokens.issuePair(USER)
      // 32 bytes of HMAC are 43 characters: the last one carries 2 spare bits, so 3 other texts decode alike
      const variants = sameBytesAs(accessToken.at(-1) as string, 2)
      expect(variants).toHaveLength(3)
      for (const c of variants) {
        const variant = `${accessToken.slice(0, -1)}${c}`
        expect(Buffer.from(variant.split('.')[2] as string, 'base64url')).toEqual(
          Buffer.from(accessToken.split('.')[2] as string, 'base64url'),
        )
        expect(() => tokens.verifyAccess(variant)).toThrow(AccessTokenInvalidError)
        expect(() => tokens.verifyRefresh(`${refreshToken.slice(0, -1)}${c}`)).toThrow(
          RefreshTokenInvalidError,
        )
      }
      expect(tokens.verifyAccess(accessToken)).toBe(USER)
    }
  })

  it('refuses a header or payload that is not canonical base64url, though correctly signed', () => {
    const now = Math.floor(clock.now() / 1000)
    const base = { sub: USER, token_type: 'Access', iat: now, exp: now + 60 }
    // a jti of the length that leaves the payload's last character 4 spare bits (bytes ≡ 1 mod 3)
    const jti = ['a', 'aa', 'aaa'].find((j) => JSON.stringify({ ...base, jti: j }).length % 3 === 1) as string
    const canonical = signByHand({ ...base, jti })
    expect(tokens.verifyAccess(canonical)).toBe(USER)
    const [header = '', payload = ''] = canonical.split('.')
    expect(payload.length % 4).toBe(2)
    const resign = (unsigned: string) =>
      `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`
    const [sameBytes] = sameBytesAs(payload.at(-1) as string, 4)
    const refused = [
      `${header}.${payload.slice(0, -1)}${sameBytes}`, // spare bits set: the same claims
      `${header}.${payload}==`, // padding
      `${header}=.${payload}`,
      `${header}.${payload}A`, // a length no whole number of bytes has
    ]
    for (const unsigned of refused) {
      expect(() => tokens.verifyAccess(resign(unsigned)), unsigned).toThrow(AccessTokenInvalidError)
    }
  })
})

/** Signs claims by hand (fast-jwt's signer itself refuses some of the shapes the tests need). */
function signByHand(claims: Record<string, unknown>): string {
  const encode = (part: unknown) => Buffer.from(JSON.stringify(part)).toString('base64url')
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`
}

describe('refreshTokenDigest', () => {
  it('is the SHA-256 hex of the token', () => {
    expect(refreshTokenDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})

describe('sessions in tokens', () => {
  const SID = '0123456789abcdef0123456789abcdef'
  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >

  it('puts sid only where asked, last, so that a token without a session is as it always was', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const plain = tokens.issuePair(USER)
    expect(Object.keys(claimsOf(plain.accessToken))).toEqual(['sub', 'token_type', 'iat', 'exp', 'jti'])
    expect(Object.keys(claimsOf(plain.refreshToken))).toEqual(['sub', 'token_type', 'iat', 'exp', 'jti'])
    const named = tokens.issuePair(USER, { id: SID, inAccess: true, inRefresh: true })
    expect(Object.keys(claimsOf(named.accessToken))).toEqual([
      'sub',
      'token_type',
      'iat',
      'exp',
      'jti',
      'sid',
    ])
    const namedSubject = { userId: USER, sessionId: SID, sessionTag: sessionTag(SID) }
    expect(tokens.verifyAccessSubject(named.accessToken)).toEqual(namedSubject)
    expect(tokens.verifyRefreshSubject(named.refreshToken)).toEqual(namedSubject)
    expect(tokens.verifyAccessSubject(plain.accessToken)).toEqual({
      userId: USER,
      sessionId: null,
      sessionTag: null,
    })
  })

  it('refuses a sid that is not 32 lowercase hexadecimal digits, though correctly signed', () => {
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    const iat = Math.floor(clock.now() / 1000)
    for (const sid of ['ABCDEF0123456789ABCDEF0123456789', 'short', 42, null]) {
      const claims = { sub: USER, token_type: 'Access', iat, exp: iat + 900, jti: 'x', sid }
      const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
      const token = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
      expect(() => tokens.verifyAccess(token)).toThrow(AccessTokenInvalidError)
    }
  })

  it('computes the same successor for the same rotation, and another for any other', () => {
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    const parent = refreshTokenDigest(tokens.issuePair(USER).refreshToken)
    const at = clock.now()
    const subject = { userId: USER, sessionId: SID, sessionTag: sessionTag(SID) }
    const successor = tokens.successor(parent, subject, at)
    // later, elsewhere: the same inputs give the same token, byte for byte
    clock.advance(5000)
    expect(tokens.successor(parent, subject, at)).toEqual(successor)
    expect(createTokenService(settings, clock).successor(parent, subject, at)).toEqual(successor)
    expect(tokens.successor(parent, { ...subject, sessionId: null }, at).token).not.toBe(successor.token)
    expect(tokens.successor(parent, { ...subject, sessionTag: null }, at).token).not.toBe(successor.token)
    expect(tokens.successor(refreshTokenDigest('other'), subject, at).token).not.toBe(successor.token)
    expect(tokens.successor(parent, subject, at + 1000).token).not.toBe(successor.token)
    // a service with another secret cannot compute it
    const other = createTokenService({ ...settings, secret: 'another-secret-another-secret-01' }, clock)
    expect(claimsOf(other.successor(parent, subject, at).token).jti).not.toBe(claimsOf(successor.token).jti)
    // it is an ordinary refresh token of the rotation's second, with a UUID jti
    const claims = claimsOf(successor.token)
    expect(claims).toMatchObject({ sub: USER, token_type: 'Refresh', iat: Math.floor(at / 1000), sid: SID })
    expect(claims.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect((claims.jti as string).replace('-', '').slice(0, 12)).toBe(sessionTag(SID))
    expect(successor.expiresAt).toBe((Math.floor(at / 1000) + settings.refreshTokenTtlSeconds) * 1000)
    expect(tokens.verifyRefreshSubject(successor.token)).toEqual(subject)
  })
})

describe('R2.3.3 the session tag of every token of a session', () => {
  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti: string }
  const TAGGED = /^[0-9a-f]{8}-[0-9a-f]{4}-87e5-[89ab]5e1-[0-9a-f]{12}$/
  const SESSION = 'c0ffee00c0ffee00c0ffee00c0ffee00'

  it('is carried by the jti of both tokens of a pair, in single mode too, with no claim added', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const pair = tokens.issuePair(USER, { id: SESSION, inAccess: false, inRefresh: false })
    for (const token of [pair.accessToken, pair.refreshToken]) {
      expect(Object.keys(claimsOf(token))).toEqual(['sub', 'token_type', 'iat', 'exp', 'jti'])
      expect(claimsOf(token).jti).toMatch(TAGGED)
    }
    expect(tokens.verifyAccessSubject(pair.accessToken)).toEqual({
      userId: USER,
      sessionId: null,
      sessionTag: sessionTag(SESSION),
    })
    expect(tokens.verifyRefreshSubject(pair.refreshToken).sessionTag).toBe(sessionTag(SESSION))
  })

  it('tells sessions apart, and tokens of one session apart, in the same second', () => {
    const tokens = createTokenService(settings, createFixedClock(Date.now()))
    const other = 'c0ffee00c0ffee00c0ffee00c0ffee01'
    const first = tokens.issuePair(USER, { id: SESSION, inAccess: false, inRefresh: false })
    const second = tokens.issuePair(USER, { id: SESSION, inAccess: false, inRefresh: false })
    const elsewhere = tokens.issuePair(USER, { id: other, inAccess: false, inRefresh: false })
    expect(claimsOf(first.accessToken).jti).not.toBe(claimsOf(second.accessToken).jti)
    expect(tokens.verifyAccessSubject(elsewhere.accessToken).sessionTag).toBe(sessionTag(other))
    expect(sessionTag(other)).not.toBe(sessionTag(SESSION))
    expect(sessionTag(SESSION)).toMatch(/^[0-9a-f]{12}$/)
  })

  it('passes from a refresh token to its successor and to the access token issued with it', () => {
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    const pair = tokens.issuePair(USER, { id: SESSION, inAccess: false, inRefresh: false })
    const subject = tokens.verifyRefreshSubject(pair.refreshToken)
    const next = tokens.successor(refreshTokenDigest(pair.refreshToken), subject, clock.now())
    expect(claimsOf(next.token).jti).toMatch(TAGGED)
    expect(tokens.verifyRefreshSubject(next.token).sessionTag).toBe(sessionTag(SESSION))
    const access = tokens.issueAccess(subject, false)
    expect(tokens.verifyAccessSubject(access).sessionTag).toBe(sessionTag(SESSION))
  })

  it('is absent from a token of no session and from one of before tags: a random UUID names none', () => {
    const clock = createFixedClock(Date.now())
    const tokens = createTokenService(settings, clock)
    expect(tokens.verifyAccessSubject(tokens.issuePair(USER).accessToken).sessionTag).toBeNull()
    const iat = Math.floor(clock.now() / 1000)
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
    // a jti of before tags, and one that has a tag's shape but not its mark
    for (const jti of ['0d4f2b1e-5a6c-4e7f-9a8b-1c2d3e4f5a6b', '0d4f2b1e-5a6c-87e5-95e0-1c2d3e4f5a6b']) {
      const claims = { sub: USER, token_type: 'Access', iat, exp: iat + 900, jti }
      const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
      const token = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
      expect(tokens.verifyAccessSubject(token)).toEqual({ userId: USER, sessionId: null, sessionTag: null })
    }
  })
})
