import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { AppError, ConfigError, createAccessTokenVerifier } from '../../src/index.js'
import { bearer, decodeJwt, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, TEST_SECRET } from '../support/test-service.js'
import {
  CHALLENGE,
  expectServiceRefuses,
  type MintedTokens,
  mintTokens,
  OTHER_SECRET,
  REFUSALS,
  sqlite,
} from './minted-tokens.js'

/** What `verify` threw, as the fields a caller answers with; fails when it did not throw. */
function refusalOf(run: () => unknown) {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    const { statusCode, code, message, headers } = error as AppError
    return { statusCode, code, message, challenge: headers['www-authenticate'] }
  }
  throw new Error('the verifier accepted the token')
}

// The verifier runs spec 5.2's checks in other services: it must accept and refuse exactly what GET /auth/me does.
describe('createAccessTokenVerifier against tokens of a running service', () => {
  let tokens: MintedTokens
  beforeAll(async () => {
    tokens = await mintTokens()
  })
  afterAll(() => tokens.close())

  const verifier = () => createAccessTokenVerifier({ secret: TEST_SECRET, clock: tokens.clock })

  it('R5.9.1 a valid access token gives the id of the user GET /auth/me names', async () => {
    const me = await tokens.me(`Bearer ${tokens.user.accessToken}`)
    expect(me.status).toBe(200)
    expect(verifier().verify(`Bearer ${tokens.user.accessToken}`)).toEqual({
      userId: me.body.data.id,
      role: 'user',
    })
    expect(verifier().verifyToken(tokens.user.accessToken)).toEqual({ userId: tokens.user.id, role: 'user' })
  })

  it.each(REFUSALS.map((refusal) => [refusal.name, refusal] as const))(
    'R5.9.1 %s: the service’s own 401, message, code and challenge',
    async (_name, refusal) => {
      await expectServiceRefuses(tokens, refusal)
      expect(refusalOf(() => verifier().verify(refusal.authorization(tokens)))).toEqual({
        statusCode: 401,
        code: refusal.code,
        message: refusal.message,
        challenge: refusal.challenge,
      })
    },
  )

  it('R5.9.4 R2.3.6 the role of a token that carries one, and `user` for one that does not', async () => {
    const { createTokenService } = await import('../../src/auth/token-service.js')
    const service = createTokenService(
      {
        secret: TEST_SECRET,
        previousSecrets: [],
        accessTokenTtlSeconds: 900,
        refreshTokenTtlSeconds: 604_800,
      },
      tokens.clock,
    )
    const editor = service.issueAccess(
      { userId: tokens.user.id, sessionId: null, sessionTag: null, role: 'editor' },
      false,
    )
    expect(decodeJwt(editor).claims.role).toBe('editor')
    expect(verifier().verifyToken(editor)).toEqual({ userId: tokens.user.id, role: 'editor' })
    // `user` is never written: a user's token is what it was before roles
    const user = service.issueAccess(
      { userId: tokens.user.id, sessionId: null, sessionTag: null, role: 'user' },
      false,
    )
    expect(decodeJwt(user).claims).not.toHaveProperty('role')
    expect(verifier().verify(`Bearer ${user}`)).toEqual({ userId: tokens.user.id, role: 'user' })
  })

  it('R5.9.1 verifyToken runs the token checks alone: a refresh token is of the wrong type, a tampered one invalid', () => {
    expect(refusalOf(() => verifier().verifyToken(tokens.user.refreshToken)).message).toBe(
      MESSAGES.tokenWrongType,
    )
    expect(refusalOf(() => verifier().verifyToken(tokens.tampered)).message).toBe(MESSAGES.accessTokenInvalid)
  })

  it('R5.9.2 expiry has no leeway, on the injected clock: valid until the millisecond before exp, refused from exp on', () => {
    const { exp } = decodeJwt(tokens.user.accessToken).claims
    const clock = createFixedClock(exp * 1000 - 1)
    const onItsClock = createAccessTokenVerifier({ secret: TEST_SECRET, clock })
    expect(onItsClock.verify(`Bearer ${tokens.user.accessToken}`)).toEqual({
      userId: tokens.user.id,
      role: 'user',
    })
    clock.advance(1)
    expect(refusalOf(() => onItsClock.verify(`Bearer ${tokens.user.accessToken}`))).toEqual({
      statusCode: 401,
      code: 'access_token_invalid',
      message: MESSAGES.accessTokenInvalid,
      challenge: CHALLENGE.invalidToken,
    })
  })

  it('R5.9.2 an expired token: the service and a verifier on its clock refuse it alike; an expired refresh token is invalid (R5.2.5)', async () => {
    const start = tokens.clock.now()
    const onServiceClock = verifier()
    try {
      tokens.clock.advance(15 * 60_000)
      await expectServiceRefuses(tokens, {
        name: 'expired',
        authorization: () => `Bearer ${tokens.user.accessToken}`,
        message: MESSAGES.accessTokenInvalid,
        code: 'access_token_invalid',
        challenge: CHALLENGE.invalidToken,
      })
      expect(refusalOf(() => onServiceClock.verify(`Bearer ${tokens.user.accessToken}`)).message).toBe(
        MESSAGES.accessTokenInvalid,
      )
      // still of the wrong type while it lives, invalid once expired: the check of R5.2.3 comes first
      expect(refusalOf(() => onServiceClock.verifyToken(tokens.user.refreshToken)).message).toBe(
        MESSAGES.tokenWrongType,
      )
      tokens.clock.advance(7 * 86_400_000)
      expect(refusalOf(() => onServiceClock.verifyToken(tokens.user.refreshToken)).message).toBe(
        MESSAGES.accessTokenInvalid,
      )
      const me = await tokens.me(`Bearer ${tokens.user.refreshToken}`)
      expect(me.body.message).toBe(MESSAGES.accessTokenInvalid)
    } finally {
      tokens.clock.set(start)
    }
  })

  it('R5.9.2 a token signed with a previous secret is accepted through previousSecrets, as by a service that rotated', async () => {
    // the secret rotated: the service now signs with OTHER_SECRET and still accepts TEST_SECRET (R5.5.2)
    const rotated = createAccessTokenVerifier({
      secret: OTHER_SECRET,
      previousSecrets: [TEST_SECRET],
      clock: tokens.clock,
    })
    expect(rotated.verify(`Bearer ${tokens.user.accessToken}`)).toEqual({
      userId: tokens.user.id,
      role: 'user',
    })
    expect(rotated.verify(`Bearer ${tokens.otherUser.accessToken}`)).toEqual({
      userId: tokens.otherUser.id,
      role: 'user',
    })
    // without the previous secret the same token is one signed with another secret
    const forgetful = createAccessTokenVerifier({ secret: OTHER_SECRET, clock: tokens.clock })
    expect(refusalOf(() => forgetful.verify(`Bearer ${tokens.user.accessToken}`)).message).toBe(
      MESSAGES.accessTokenInvalid,
    )
  })

  it('R5.9.2 a secret is taken trimmed, as the service reads AUTH_JWT_SECRET (a final newline is no part of it)', () => {
    const fromFile = createAccessTokenVerifier({ secret: `${TEST_SECRET}\n`, clock: tokens.clock })
    expect(fromFile.verify(`Bearer ${tokens.user.accessToken}`)).toEqual({
      userId: tokens.user.id,
      role: 'user',
    })
  })

  it('R5.9.2 the lifetimes are the service’s: a verifier set shorter than the service refuses its tokens (R5.5.5)', async () => {
    const longer = await startTestService(sqlite, {
      clock: tokens.clock,
      env: { AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES: '30' },
    })
    try {
      // the verifier's defaults (15 minutes, 7 days) are the service's: a service left to them is matched as it is
      expect(tokens.service.config.auth).toMatchObject({
        accessTokenTtlSeconds: 15 * 60,
        refreshTokenTtlSeconds: 7 * 86_400,
      })
      const user = await registerUser(longer.app)
      const header = bearer(user.accessToken).authorization
      expect(refusalOf(() => verifier().verify(header)).message).toBe(MESSAGES.accessTokenInvalid)
      const matching = createAccessTokenVerifier({
        secret: TEST_SECRET,
        accessTokenExpirationMinutes: 30,
        clock: tokens.clock,
      })
      expect(matching.verify(header)).toEqual({ userId: user.id, role: 'user' })
    } finally {
      await longer.close()
    }
  })
})

describe('createAccessTokenVerifier refuses settings that would let tokens be forged or misjudged', () => {
  it.each([
    [{ secret: 'secret' }, 'secret must have at least 32 characters, 10 of them distinct'],
    [{ secret: 'a'.repeat(64) }, 'secret must have at least 32 characters, 10 of them distinct'],
    [
      { secret: `  ${TEST_SECRET.slice(0, 31)}  ` },
      'secret must have at least 32 characters, 10 of them distinct',
    ],
    [
      { secret: TEST_SECRET, previousSecrets: [OTHER_SECRET, 'changeme'] },
      'previousSecrets entry 2 must have at least 32 characters, 10 of them distinct',
    ],
    [
      { secret: TEST_SECRET, accessTokenExpirationMinutes: 0 },
      'accessTokenExpirationMinutes must be a positive integer',
    ],
    [
      { secret: TEST_SECRET, refreshTokenExpirationDays: 1.5 },
      'refreshTokenExpirationDays must be a positive integer',
    ],
  ])('R5.9.3 %j: "%s"', (options, message) => {
    let thrown: unknown
    try {
      createAccessTokenVerifier(options)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as ConfigError).message).toBe(message)
  })
})
