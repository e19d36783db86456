import * as crypto from 'node:crypto'
import { createVerifier, TokenError } from 'fast-jwt'
import type { Clock } from '../clock.js'
import { AccessTokenInvalidError, RefreshTokenInvalidError, TokenWrongTypeError } from '../errors.js'
import { isCanonicalCompactJws } from './base64url.js'
import { createHs256Signer } from './hs256-signer.js'
import { isUserId } from './user-id.js'
import { createVerifiedTokenMemory } from './verified-token-memory.js'

/** docs/api.md R2.3.1: token_type is serialized as the enumeration's own names. */
export type TokenType = 'Access' | 'Refresh'

export interface TokenClaims {
  sub: string
  token_type: TokenType
  iat: number
  exp: number
  jti: string
}

export interface TokenPair {
  accessToken: string
  refreshToken: string
  /** When the refresh token expires, in epoch milliseconds; its stored digest expires at the same moment. */
  refreshExpiresAt: number
}

export interface TokenService {
  /** A new access and refresh token for the user, each with a unique `jti`. */
  issuePair(userId: string): TokenPair
  /** spec 5.2: signature and expiry, then token_type Access. Returns the user id from `sub`. */
  verifyAccess(token: string): string
  /** spec 4.5 rule 1: signature, token_type Refresh, expiry. Returns the user id from `sub`. */
  verifyRefresh(token: string): string
}

export interface TokenSettings {
  secret: string
  /** Accepted for verification only, never used to sign: rotating the secret does not log everyone out. */
  previousSecrets: readonly string[]
  accessTokenTtlSeconds: number
  refreshTokenTtlSeconds: number
}

const REQUIRED_CLAIMS = ['sub', 'exp', 'iat', 'jti', 'token_type']
const REMEMBERED_ACCESS_TOKENS = 10_000
/** Longer than any token this service issues (about 280 characters): longer ones are not remembered. */
const REMEMBERED_TOKEN_MAX_LENGTH = 512

/** The SHA-256 digest (hex) under which a refresh token is stored; the token itself never is. */
export const refreshTokenDigest: (token: string) => string =
  // the one-shot crypto.hash (Node 20.12 and later) takes 0.5 µs where a Hash object takes 1.2
  typeof crypto.hash === 'function'
    ? (token) => crypto.hash('sha256', token, 'hex')
    : (token) => crypto.createHash('sha256').update(token).digest('hex')

/**
 * HS256 JWTs, verified by fast-jwt and signed by createHs256Signer (the same bytes as fast-jwt's signer, faster).
 * Verification pins the algorithm to HS256 (so `none` and every other `alg` fail), requires
 * `exp` and allows no clock leeway; header fields such as `kid` or `jku` are ignored, never fetched. A token whose
 * parts are not canonical base64url is refused before its signature is checked, so one token has one text. `clock`
 * dates the tokens issued and decides their expiry (fast-jwt's own time checks are off: it would read the system
 * time).
 */
export function createTokenService(settings: TokenSettings, clock: Clock): TokenService {
  const sign = createHs256Signer(settings.secret)
  const lifetimes: Record<TokenType, number> = {
    Access: settings.accessTokenTtlSeconds,
    Refresh: settings.refreshTokenTtlSeconds,
  }
  const keys = [settings.secret, ...settings.previousSecrets]
  const verifiers = keys.map((key) =>
    createVerifier({
      key,
      algorithms: ['HS256'],
      requiredClaims: REQUIRED_CLAIMS,
      // expiry and not-before are checked below against the service's clock
      ignoreExpiration: true,
      ignoreNotBefore: true,
    }),
  )
  // A client repeats its access token on every call: access tokens verified recently are remembered until their exp.
  // A refresh token is used once: nothing to remember.
  const remembered = createVerifiedTokenMemory<TokenClaims>({
    limit: REMEMBERED_ACCESS_TOKENS,
    maxTokenLength: REMEMBERED_TOKEN_MAX_LENGTH,
  })

  const mint = (userId: string, type: TokenType, issuedAt: number, ttlSeconds: number): string => {
    const claims: TokenClaims = {
      sub: userId,
      token_type: type,
      iat: issuedAt,
      exp: issuedAt + ttlSeconds,
      jti: crypto.randomUUID(),
    }
    return sign(claims)
  }

  /** The verified claims, or null for a token that is malformed, forged, expired or of an unknown shape. */
  const decode = (token: string, expected: TokenType): TokenClaims | null => {
    const now = clock.now()
    const known = expected === 'Access' ? remembered.recall(token, now) : undefined
    if (known !== undefined) return known
    if (!isCanonicalCompactJws(token)) return null
    for (const verify of verifiers) {
      try {
        const claims: unknown = verify(token)
        // no leeway (RFC 7519 4.1.4): from the millisecond exp * 1000 on, the token is refused
        if (!hasTokenShape(claims) || claims.exp * 1000 <= now || notYetValid(claims, now)) return null
        if (!plausibleTimes(claims, now, lifetimes[claims.token_type])) return null
        if (expected === 'Access') remembered.remember(token, claims)
        return claims
      } catch (error) {
        // only a signature made with another key sends us on to the previous secrets
        if (!(error instanceof TokenError) || error.code !== TokenError.codes.invalidSignature) return null
      }
    }
    return null
  }

  const verifyAs = (token: string, type: TokenType, invalid: () => Error): string => {
    const claims = decode(token, type)
    if (claims === null) throw invalid()
    if (claims.token_type !== type) throw new TokenWrongTypeError()
    return claims.sub
  }

  return {
    issuePair(userId) {
      const issuedAt = Math.floor(clock.now() / 1000)
      return {
        accessToken: mint(userId, 'Access', issuedAt, settings.accessTokenTtlSeconds),
        refreshToken: mint(userId, 'Refresh', issuedAt, settings.refreshTokenTtlSeconds),
        refreshExpiresAt: (issuedAt + settings.refreshTokenTtlSeconds) * 1000,
      }
    },
    verifyAccess: (token) => verifyAs(token, 'Access', () => new AccessTokenInvalidError()),
    verifyRefresh: (token) => verifyAs(token, 'Refresh', () => new RefreshTokenInvalidError()),
  }
}

/**
 * docs/api.md R5.5.5: a token this service issued has `iat` at or before now (by the injected clock, with no leeway,
 * like `exp`) and `exp` exactly its type's lifetime after `iat`. A token issued in the future, or living longer than
 * the configured lifetime (an `exp` of 1e300), was not made by this configuration and is refused: a lifetime
 * shortened since then ends the longer tokens issued before.
 */
function plausibleTimes(claims: TokenClaims, nowMs: number, lifetimeSeconds: number): boolean {
  return claims.iat * 1000 <= nowMs && claims.exp > claims.iat && claims.exp - claims.iat <= lifetimeSeconds
}

/** A token carrying `nbf` (this service issues none) is refused before that second. */
function notYetValid(claims: object, nowMs: number): boolean {
  const { nbf } = claims as { nbf?: unknown }
  return nbf !== undefined && !(typeof nbf === 'number' && nbf * 1000 <= nowMs)
}

function hasTokenShape(claims: unknown): claims is TokenClaims {
  if (typeof claims !== 'object' || claims === null) return false
  const c = claims as Record<string, unknown>
  return (
    isUserId(c.sub) &&
    (c.token_type === 'Access' || c.token_type === 'Refresh') &&
    Number.isSafeInteger(c.exp) &&
    Number.isSafeInteger(c.iat) &&
    typeof c.jti === 'string'
  )
}
