import * as crypto from 'node:crypto'
import { createVerifier, TokenError } from 'fast-jwt'
import type { Clock } from '../clock.js'
import { AccessTokenInvalidError, RefreshTokenInvalidError, TokenWrongTypeError } from '../errors.js'
import type { Caller } from '../sessions/caller.js'
import { sessionTag } from '../sessions/session-tag.js'
import { ROLE_NAME } from '../storage/stores.js'
import type { AccessTokenKeyRing } from './access-token-signature.js'
import { isCanonicalCompactJws } from './base64url.js'
import { createHs256Signer } from './hs256-signer.js'
import { isUserId } from './user-id.js'
import { createVerifiedTokenMemory } from './verified-token-memory.js'

/** The role of every account until an operator gives it another: its tokens carry no `role` claim. */
export const DEFAULT_ROLE = 'user'

/** docs/api.md R2.3.1: token_type is serialized as the enumeration's own names. */
export type TokenType = 'Access' | 'Refresh'

export interface TokenClaims {
  sub: string
  token_type: TokenType
  iat: number
  exp: number
  jti: string
  /**
   * The session the token belongs to (docs/api.md §2.3): 32 hexadecimal digits, present only when the service
   * names sessions in its tokens (AUTH_SESSIONS=per-device, or reuse detection on); absent by default.
   */
  sid?: string
  /** AUTH_JWT_ISSUER, in access tokens only, and only when it is set (docs/api.md §2.3). */
  iss?: string
  /**
   * The account's role when it is not `user` (docs/api.md §2.3): a token without one is a `user`'s. In refresh
   * tokens too, so that a rotation's access token carries it without reading the account.
   */
  role?: string
}

/** Whose a verified token is: its `sub`, its `sid` when it carries one, and the session tag of its `jti`. */
export type TokenSubject = Caller

/** The session a new pair belongs to, and which of its tokens name it with `sid` (docs/api.md R2.3.4). */
export interface PairSession {
  id: string
  /** Whether the access token carries `sid` (AUTH_SESSIONS=per-device). */
  inAccess: boolean
  /** Whether the refresh token carries `sid` (per-device, or reuse detection on). */
  inRefresh: boolean
}

/** A new refresh token and when it expires (epoch milliseconds; its stored digest expires at the same moment). */
export interface IssuedRefreshToken {
  token: string
  expiresAt: number
}

export interface TokenPair {
  accessToken: string
  refreshToken: string
  /** When the refresh token expires, in epoch milliseconds; its stored digest expires at the same moment. */
  refreshExpiresAt: number
}

export interface TokenService {
  /**
   * A new access and refresh token for the user, each with a unique `jti` carrying the session's tag (R2.3.3); each
   * carries `sid` as `session` says. Without a session (tests, tools), the `jti` is a random UUID and tags nothing.
   */
  issuePair(userId: string, session?: PairSession | null, role?: string): TokenPair
  /**
   * A new access token of the session `subject` names: `sid` when `withSid` (and the subject has one), its session
   * tag in the `jti`, and `role` when it is not `user`.
   */
  issueAccess(subject: TokenSubject, withSid: boolean): string
  /**
   * The refresh token that replaces the one whose digest is `parentDigest` in a rotation at `rotatedAt` (epoch ms):
   * a function of its arguments alone, so that the same rotation always yields the same token. Its `jti` carries the
   * subject's session tag and a keyed hash of the parent's digest (a key derived from the signing secret: nobody
   * without it can compute a successor), its `iat` the rotation's second. This is what lets the reuse grace
   * (docs/api.md §3) answer a replayed token with the successor already issued, without storing that successor
   * anywhere readable.
   */
  successor(parentDigest: string, subject: TokenSubject, rotatedAt: number): IssuedRefreshToken
  /** spec 5.2: signature and expiry, then token_type Access. Returns the user id from `sub`. */
  verifyAccess(token: string): string
  /** spec 4.5 rule 1: signature, token_type Refresh, expiry. Returns the user id from `sub`. */
  verifyRefresh(token: string): string
  /** verifyAccess, returning the token's `sid` too. */
  verifyAccessSubject(token: string): TokenSubject
  /** verifyRefresh, returning the token's `sid` too. */
  verifyRefreshSubject(token: string): TokenSubject
}

export interface TokenSettings {
  secret: string
  /** Accepted for verification only, never used to sign: rotating the secret does not log everyone out. */
  previousSecrets: readonly string[]
  accessTokenTtlSeconds: number
  refreshTokenTtlSeconds: number
  /**
   * AUTH_JWT_ALGORITHM EdDSA or ES256 (access-token-keys.ts): access tokens are signed with its private key and
   * accepted only when signed with one of its keys; refresh tokens stay HS256 with `secret`. Absent or null: HS256.
   */
  accessTokenKeys?: AccessTokenKeyRing | null
  /** AUTH_JWT_ISSUER: the `iss` of every access token issued, then required of every access token accepted. */
  issuer?: string | null
}

const REQUIRED_CLAIMS = ['sub', 'exp', 'iat', 'jti', 'token_type']
/** A session id: 32 lowercase hexadecimal digits. */
const SESSION_ID = /^[0-9a-f]{32}$/
/** HKDF's `info` for the key of successors' `jti` (one key per purpose, all derived from the signing secret). */
const SUCCESSOR_KEY_INFO = 'tessera refresh-token successor v1'
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
 * `exp` and allows no clock leeway; header fields such as `kid` or `jku` are ignored, never fetched. With
 * `accessTokenKeys` (EdDSA or ES256), access tokens are signed and checked with those keys instead, chosen by the
 * token's whole header (never fetched either), and the secrets verify refresh tokens alone. A token whose
 * parts are not canonical base64url is refused before its signature is checked, so one token has one text. `clock`
 * dates the tokens issued and decides their expiry (fast-jwt's own time checks are off: it would read the system
 * time).
 */
export function createTokenService(settings: TokenSettings, clock: Clock): TokenService {
  const sign = createHs256Signer(settings.secret)
  const accessKeys = settings.accessTokenKeys ?? null
  const issuer = settings.issuer ?? null
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

  // a KeyObject made once: HMAC with a raw Buffer imports the key again on every call (half the successor's cost)
  const successorKey = crypto.createSecretKey(
    Buffer.from(
      crypto.hkdfSync(
        'sha256',
        Buffer.from(settings.secret, 'utf8'),
        Buffer.alloc(0),
        SUCCESSOR_KEY_INFO,
        32,
      ),
    ),
  )

  const mint = (
    userId: string,
    type: TokenType,
    issuedAt: number,
    ttlSeconds: number,
    sessionId: string | null,
    role: string | undefined,
    jti: string,
  ): string => {
    const claims: TokenClaims = {
      sub: userId,
      token_type: type,
      iat: issuedAt,
      exp: issuedAt + ttlSeconds,
      jti,
    }
    // appended, never in the middle: a token without a session is byte for byte what it was before sessions
    if (sessionId !== null) claims.sid = sessionId
    if (type === 'Access' && issuer !== null) claims.iss = issuer
    if (role !== undefined && role !== DEFAULT_ROLE) claims.role = role
    return type === 'Access' && accessKeys !== null ? accessKeys.sign(claims) : sign(claims)
  }

  /** The verified claims, or null for a token that is malformed, forged, expired or of an unknown shape. */
  const decode = (token: string, expected: TokenType): TokenClaims | null => {
    const now = clock.now()
    const known = expected === 'Access' ? remembered.recall(token, now) : undefined
    if (known !== undefined) return known
    if (!isCanonicalCompactJws(token)) return null
    // a header that names an access-token key exactly is checked with that key alone, any other with the secrets
    const keyCheck = accessKeys?.verifierFor(token)
    for (const verify of keyCheck === undefined ? verifiers : [keyCheck]) {
      try {
        const claims: unknown = verify(token)
        // no leeway (RFC 7519 4.1.4): from the millisecond exp * 1000 on, the token is refused
        if (!hasTokenShape(claims) || claims.exp * 1000 <= now || notYetValid(claims, now)) return null
        if (!plausibleTimes(claims, now, lifetimes[claims.token_type])) return null
        // with access-token keys, an access token signed with a secret (however valid the secret) is refused, and a
        // refresh token signed with an access-token key: neither was issued by this configuration
        if (accessKeys !== null && (claims.token_type === 'Access') !== (keyCheck !== undefined)) return null
        if (claims.token_type === 'Access' && issuer !== null && claims.iss !== issuer) return null
        if (expected === 'Access') remembered.remember(token, claims)
        return claims
      } catch (error) {
        // only a signature made with another key sends us on to the previous secrets
        if (!(error instanceof TokenError) || error.code !== TokenError.codes.invalidSignature) return null
      }
    }
    return null
  }

  const verifyAs = (token: string, type: TokenType, invalid: () => Error): TokenSubject => {
    const claims = decode(token, type)
    if (claims === null) throw invalid()
    if (claims.token_type !== type) throw new TokenWrongTypeError()
    const subject: TokenSubject = {
      userId: claims.sub,
      sessionId: claims.sid ?? null,
      sessionTag: jtiSessionTag(claims.jti),
    }
    if (claims.role !== undefined) subject.role = claims.role
    return subject
  }
  const accessInvalid = () => new AccessTokenInvalidError()
  const refreshInvalid = () => new RefreshTokenInvalidError()

  return {
    issuePair(userId, session = null, role = undefined) {
      const issuedAt = Math.floor(clock.now() / 1000)
      const tag = session === null ? null : sessionTag(session.id)
      return {
        accessToken: mint(
          userId,
          'Access',
          issuedAt,
          settings.accessTokenTtlSeconds,
          session?.inAccess ? session.id : null,
          role,
          randomJti(tag),
        ),
        refreshToken: mint(
          userId,
          'Refresh',
          issuedAt,
          settings.refreshTokenTtlSeconds,
          session?.inRefresh ? session.id : null,
          role,
          randomJti(tag),
        ),
        refreshExpiresAt: (issuedAt + settings.refreshTokenTtlSeconds) * 1000,
      }
    },
    issueAccess: (subject, withSid) =>
      mint(
        subject.userId,
        'Access',
        Math.floor(clock.now() / 1000),
        settings.accessTokenTtlSeconds,
        withSid ? subject.sessionId : null,
        subject.role,
        randomJti(subject.sessionTag),
      ),
    successor(parentDigest, subject, rotatedAt) {
      const issuedAt = Math.floor(rotatedAt / 1000)
      const ttl = settings.refreshTokenTtlSeconds
      const keyed = crypto.createHmac('sha256', successorKey).update(parentDigest).digest('hex')
      const jti = subject.sessionTag === null ? uuidV8(keyed) : taggedJti(subject.sessionTag, keyed)
      return {
        token: mint(subject.userId, 'Refresh', issuedAt, ttl, subject.sessionId, subject.role, jti),
        expiresAt: (issuedAt + ttl) * 1000,
      }
    },
    verifyAccess: (token) => verifyAs(token, 'Access', accessInvalid).userId,
    verifyRefresh: (token) => verifyAs(token, 'Refresh', refreshInvalid).userId,
    verifyAccessSubject: (token) => verifyAs(token, 'Access', accessInvalid),
    verifyRefreshSubject: (token) => verifyAs(token, 'Refresh', refreshInvalid),
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

/**
 * A UUID (RFC 9562) of version 8, the version for identifiers of an application's own making, from the first 32
 * hexadecimal digits of a hash (`hex`): the version digit is 8, the variant's two bits 10, the rest the hash's. A
 * successor's `jti` has the form of every other `jti` this service issues.
 */
function uuidV8(hex: string): string {
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/**
 * docs/api.md R2.3.3: the `jti` of a token of a session, a UUID of version 8 laid out as
 * `TTTTTTTT-TTTT-8MMM-vMMM-UUUUUUUUUUUU`: T the session's 48-bit tag (sessions/session-tag.ts), M a fixed mark that
 * tells a tagged `jti` from those of before (a random UUID of version 4, or a successor's keyed hash, which matches the
 * 24-bit mark once in 16 million), v the variant, U the token's own 50 bits (random, or a successor's keyed hash), so
 * two tokens of one session still differ. `unique` is at least 13 hexadecimal digits.
 */
function taggedJti(tag: string, unique: string): string {
  const variant = ((Number.parseInt(unique.charAt(0), 16) & 0x3) | 0x8).toString(16)
  return `${tag.slice(0, 8)}-${tag.slice(8, 12)}-8${TAG_MARK[0]}-${variant}${TAG_MARK[1]}-${unique.slice(1, 13)}`
}

/** The two halves of a tagged `jti`'s mark (taggedJti). */
const TAG_MARK = ['7e5', '5e1'] as const
const TAGGED_JTI = new RegExp(
  `^([0-9a-f]{8})-([0-9a-f]{4})-8${TAG_MARK[0]}-[89ab]${TAG_MARK[1]}-[0-9a-f]{12}$`,
)

/** A new token's `jti`: tagged with its session's tag, or a random UUID for a token of no session. */
function randomJti(tag: string | null): string {
  const random = crypto.randomUUID()
  // the random UUID's last 15 digits are all random (its version and variant come before them)
  return tag === null ? random : taggedJti(tag, random.slice(21).replace('-', ''))
}

/** The session tag a `jti` carries, or null for one issued without (before tags, or of no session). */
function jtiSessionTag(jti: string): string | null {
  const match = TAGGED_JTI.exec(jti)
  return match === null ? null : `${match[1]}${match[2]}`
}

function hasTokenShape(claims: unknown): claims is TokenClaims {
  if (typeof claims !== 'object' || claims === null) return false
  const c = claims as Record<string, unknown>
  return (
    isUserId(c.sub) &&
    (c.token_type === 'Access' || c.token_type === 'Refresh') &&
    Number.isSafeInteger(c.exp) &&
    Number.isSafeInteger(c.iat) &&
    typeof c.jti === 'string' &&
    (c.sid === undefined || (typeof c.sid === 'string' && SESSION_ID.test(c.sid))) &&
    (c.role === undefined ||
      (typeof c.role === 'string' && ROLE_NAME.test(c.role) && c.role !== DEFAULT_ROLE))
  )
}
