import { createTokenService, DEFAULT_ROLE, type TokenSubject } from '../auth/token-service.js'
import { type Clock, systemClock } from '../clock.js'
import { isStrongSecret, SECRET_RULE } from '../config/auth-config.js'
import { ConfigError } from '../config/config-error.js'
import type {
  AccessTokenInvalidError,
  AuthorizationMalformedError,
  AuthorizationMissingError,
  TokenWrongTypeError,
} from '../errors.js'
import { bearerToken } from '../http/authenticate.js'
import {
  createRemoteAccessTokenVerifier,
  type RemoteAccessTokenVerifier,
  type RemoteAccessTokenVerifierOptions,
} from './remote-access-token-verifier.js'

/** The settings of a verifier: the service's own, as its variables give them. */
export interface AccessTokenVerifierOptions {
  /** The service's `AUTH_JWT_SECRET` (trimmed, like every variable the service reads). */
  secret: string
  /** The service's `AUTH_JWT_PREVIOUS_SECRETS`, one entry each: accepted for verification, as the service does. */
  previousSecrets?: readonly string[]
  /**
   * The service's `AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES` (default 15). An access token whose `exp` lies more than
   * this after its `iat` is refused (docs/api.md R5.5.5), so a verifier set shorter than the service refuses its tokens.
   */
  accessTokenExpirationMinutes?: number
  /**
   * The service's `AUTH_REFRESH_TOKEN_EXPIRATION_DAYS` (default 7): a refresh token presented as an access token is
   * then told apart (`token_wrong_type`) exactly as the service tells it apart.
   */
  refreshTokenExpirationDays?: number
  /** The service's `AUTH_JWT_ISSUER`, when it sets one: every access token must then carry it as `iss`. */
  issuer?: string
  /**
   * The clock that decides expiry (default: the system clock). The service's rule is one clock: tokens are checked
   * with no leeway, so the verifier's machine must keep time with the service's (NTP).
   */
  clock?: Clock
}

/** The user an access token was issued to. */
export interface VerifiedAccess {
  /** The user's id (claim `sub`), the `id` of `GET /auth/me`. */
  userId: string
  /**
   * The account's role when the token was issued (claim `role`; `user` for a token without one, docs/api.md §2.3):
   * what an application authorizes with. An operator's change takes effect at the account's next login.
   */
  role: string
}

/** The access a verified token grants: its user and its role (`user` when it carries none). */
export function verifiedAccess(subject: TokenSubject): VerifiedAccess {
  return { userId: subject.userId, role: subject.role ?? DEFAULT_ROLE }
}

/**
 * Why a request was refused: the service's own 401 errors, each with `statusCode` 401, a stable `code`, the public
 * `message` the service answers with, and the `headers` of its answer (`WWW-Authenticate`, docs/api.md R5.4).
 */
export type AccessTokenRejection =
  | AuthorizationMissingError
  | AuthorizationMalformedError
  | AccessTokenInvalidError
  | TokenWrongTypeError

/** Verifies Tessera access tokens in another service, exactly as Tessera's protected endpoints do (spec 5.2). */
export interface AccessTokenVerifier {
  /**
   * The four checks of spec 5.2 in order on the value of an `Authorization` header (undefined when the request has
   * none): present, `Bearer <token>`, a valid token (signature, claims, expiry), `token_type` Access. Throws the
   * AccessTokenRejection of the first that fails.
   */
  verify(authorization: string | undefined): VerifiedAccess
  /** The last two checks on a bare token (one that did not come in an `Authorization` header). */
  verifyToken(token: string): VerifiedAccess
}

const WEAK_SECRET = `must have at least ${SECRET_RULE.minLength} characters, ${SECRET_RULE.minDistinct} of them distinct`

/**
 * A verifier of the access tokens a Tessera service issues, for the application's own APIs (access tokens are
 * stateless, spec 1: the shared secret is all it takes). It runs the service's own code, so it accepts and refuses
 * what the service does, with the same messages. Throws a ConfigError naming the option for a secret that breaks
 * the service's rule (docs/api.md R5.5.3: 32 characters, 10 distinct), which would let anyone forge tokens.
 *
 * With `jwksUrl` instead of `secret` (a service with AUTH_JWT_ALGORITHM EdDSA or ES256), the verifier holds no
 * secret: it checks tokens with the public keys the service publishes, and answers with promises
 * (remote-access-token-verifier.ts).
 */
export function createAccessTokenVerifier(
  options: RemoteAccessTokenVerifierOptions,
): RemoteAccessTokenVerifier
export function createAccessTokenVerifier(options: AccessTokenVerifierOptions): AccessTokenVerifier
export function createAccessTokenVerifier(
  options: AccessTokenVerifierOptions | RemoteAccessTokenVerifierOptions,
): AccessTokenVerifier | RemoteAccessTokenVerifier {
  if ('jwksUrl' in options) return createRemoteAccessTokenVerifier(options)
  return createSecretVerifier(options)
}

function createSecretVerifier(options: AccessTokenVerifierOptions): AccessTokenVerifier {
  const secret = strongSecret('secret', options.secret)
  const previousSecrets = (options.previousSecrets ?? []).map((value, index) =>
    strongSecret(`previousSecrets entry ${index + 1}`, value),
  )
  const tokens = createTokenService(
    {
      secret,
      previousSecrets,
      accessTokenTtlSeconds:
        60 * positiveInteger('accessTokenExpirationMinutes', options.accessTokenExpirationMinutes, 15),
      refreshTokenTtlSeconds:
        86_400 * positiveInteger('refreshTokenExpirationDays', options.refreshTokenExpirationDays, 7),
      issuer: issuerOf(options.issuer),
    },
    options.clock ?? systemClock,
  )
  return {
    verify: (authorization) => verifiedAccess(tokens.verifyAccessSubject(bearerToken(authorization))),
    verifyToken: (token) => verifiedAccess(tokens.verifyAccessSubject(token)),
  }
}

function issuerOf(value: unknown): string | null {
  if (value === undefined) return null
  if (typeof value !== 'string' || value === '') {
    throw new ConfigError('issuer', 'must be the service’s AUTH_JWT_ISSUER, a non-empty string')
  }
  return value
}

function strongSecret(option: string, value: unknown): string {
  const secret = typeof value === 'string' ? value.trim() : ''
  if (!isStrongSecret(secret)) throw new ConfigError(option, WEAK_SECRET)
  return secret
}

function positiveInteger(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new ConfigError(option, 'must be a positive integer')
  return value
}
