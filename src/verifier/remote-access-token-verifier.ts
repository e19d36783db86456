import { KeyObject, randomBytes, type webcrypto } from 'node:crypto'
import type { createRemoteJWKSet } from 'jose'
import {
  createSignatureCheck,
  encodedHeader,
  keyFitsAlgorithm,
  type SignatureCheck,
} from '../auth/access-token-signature.js'
import { createTokenService, DEFAULT_ROLE } from '../auth/token-service.js'
import { type Clock, systemClock } from '../clock.js'
import { ConfigError } from '../config/config-error.js'
import type { AsymmetricAlgorithm } from '../config/signing-config.js'
import { bearerToken } from '../http/authenticate.js'

/** The settings of a verifier that fetches the service's public keys (AUTH_JWT_ALGORITHM EdDSA or ES256). */
export interface RemoteAccessTokenVerifierOptions {
  /**
   * The service's key set, `GET /.well-known/jwks.json` under its PUBLIC_URL
   * (`https://auth.example.com/.well-known/jwks.json`), or the `jwks_uri` of its `/.well-known/openid-configuration`. Fetched when first needed, kept, and fetched again
   * when a token names a key it does not hold (a rotation).
   */
  jwksUrl: string | URL
  /** Never with `jwksUrl`: a secret verifies HS256 tokens, which a key set cannot. */
  secret?: never
  /**
   * The algorithms accepted: the service's AUTH_JWT_ALGORITHM (default: EdDSA and ES256). HS256 and `none` are
   * never: a token's header does not choose how it is checked.
   */
  algorithms?: readonly AsymmetricAlgorithm[]
  /** The service's AUTH_JWT_ISSUER, when it sets one: every token must then carry it as `iss`. */
  issuer?: string
  /** The service's AUTH_ACCESS_TOKEN_EXPIRATION_MINUTES (default 15), as for a verifier with a secret. */
  accessTokenExpirationMinutes?: number
  /** The clock that decides expiry (default: the system clock); no leeway, so keep time with the service (NTP). */
  clock?: Clock
  /**
   * The least time between two fetches caused by tokens naming keys the set does not hold (default 30 s): a flood
   * of made-up `kid`s costs the service one request per interval, and is refused meanwhile.
   */
  jwksCooldownMs?: number
  /** How long a fetched set is used before it is fetched again (default 5 minutes, the service's Cache-Control). */
  jwksCacheMaxAgeMs?: number
  /** How long one fetch may take (default 5 s). */
  jwksTimeoutMs?: number
}

/**
 * A verifier of access tokens by the service's published keys. Its answers are those of AccessTokenVerifier, as a
 * promise: the keys may have to be fetched first. A failure to fetch them (the service unreachable, a set that is
 * not JSON) is no refusal of the token: the promise rejects with that error, which the guards pass on (a 500), and
 * the request can be tried again.
 */
export interface RemoteAccessTokenVerifier {
  /**
   * The four checks of spec 5.2 on an `Authorization` header; rejects with the AccessTokenRejection of the first that
   * fails.
   */
  verify(authorization: string | undefined): Promise<VerifiedAccess>
  /** The last two checks on a bare token. */
  verifyToken(token: string): Promise<VerifiedAccess>
}

/** The user a token was issued to: VerifiedAccess of access-token-verifier.ts, which imports this module. */
/** As VerifiedAccess of access-token-verifier.ts (which imports this file). */
type VerifiedAccess = { userId: string; role: string }

const ALGORITHMS: readonly AsymmetricAlgorithm[] = ['EdDSA', 'ES256']
const DEFAULTS = { cooldownMs: 30_000, cacheMaxAgeMs: 300_000, timeoutMs: 5_000 }

type JwksResolver = ReturnType<typeof createRemoteJWKSet>

/**
 * A verifier of the tokens a service with AUTH_JWT_ALGORITHM EdDSA or ES256 issues, checked with the keys of its JWKS
 * (fetched through jose's createRemoteJWKSet, which caches them and fetches again for an unknown `kid`). A token's
 * key is chosen by its `kid`, and only when its whole header is the one the service writes for that key, with an
 * algorithm of `algorithms`; then the service's own checks run (auth/token-service.ts): the signature, the claims
 * and their shape, `exp` and `iat` with no leeway, `iss` when configured, `token_type` Access. A refresh token is
 * refused as invalid, not as of the wrong type: it is signed with the service's secret, which this verifier does
 * not hold. Throws a ConfigError naming the option for a setting it cannot use.
 */
export function createRemoteAccessTokenVerifier(
  options: RemoteAccessTokenVerifierOptions,
): RemoteAccessTokenVerifier {
  const url = jwksUrlOf(options)
  const algorithms = options.algorithms ?? ALGORITHMS
  if (algorithms.length === 0 || !algorithms.every((algorithm) => ALGORITHMS.includes(algorithm))) {
    throw new ConfigError('algorithms', 'must list EdDSA, ES256 or both')
  }
  if (options.issuer !== undefined && (typeof options.issuer !== 'string' || options.issuer === '')) {
    throw new ConfigError('issuer', 'must be the service’s AUTH_JWT_ISSUER, a non-empty string')
  }
  const fetching = {
    cooldownDuration: nonNegative('jwksCooldownMs', options.jwksCooldownMs, DEFAULTS.cooldownMs),
    cacheMaxAge: nonNegative('jwksCacheMaxAgeMs', options.jwksCacheMaxAgeMs, DEFAULTS.cacheMaxAgeMs),
    timeoutDuration: nonNegative('jwksTimeoutMs', options.jwksTimeoutMs, DEFAULTS.timeoutMs),
  }
  /** The check of the key the set gave, by the encoded header of the tokens it signs. */
  const resolved = new Map<string, SignatureCheck>()
  const checks = new WeakMap<object, SignatureCheck>()
  const tokens = createTokenService(
    {
      // a secret nobody holds: HS256 tokens (refresh tokens among them, and any forgery) fail their signature
      secret: randomBytes(48).toString('base64url'),
      previousSecrets: [],
      accessTokenTtlSeconds: 60 * positiveInteger(options.accessTokenExpirationMinutes),
      // no refresh token verifies here: its lifetime decides nothing
      refreshTokenTtlSeconds: 7 * 86_400,
      accessTokenKeys: {
        sign() {
          throw new Error('a verifier issues no token')
        },
        verifierFor(token) {
          const headerEnd = token.indexOf('.')
          return headerEnd < 0 ? undefined : resolved.get(token.slice(0, headerEnd))
        },
      },
      issuer: options.issuer ?? null,
    },
    options.clock ?? systemClock,
  )
  // made at the first token: jose is loaded only by a verifier that fetches keys, and only once it has to
  let jwks: Promise<{ resolve: JwksResolver; noMatchingKey: new (...args: never[]) => Error }> | undefined
  const loadJwks = () => {
    jwks ??= import('jose').then((jose) => ({
      resolve: jose.createRemoteJWKSet(url, fetching),
      noMatchingKey: jose.errors.JWKSNoMatchingKey,
    }))
    return jwks
  }

  /** The check of the key `header` names in the set, or undefined when the set holds none for it. */
  const keyCheck = async (header: ServiceHeader): Promise<SignatureCheck | undefined> => {
    const { resolve, noMatchingKey } = await loadJwks()
    let key: Awaited<ReturnType<JwksResolver>>
    try {
      key = await resolve({ alg: header.alg, kid: header.kid })
    } catch (error) {
      if (error instanceof noMatchingKey) return undefined
      throw error
    }
    let check = checks.get(key)
    if (check === undefined) {
      const keyObject = key instanceof KeyObject ? key : KeyObject.from(key as webcrypto.CryptoKey)
      if (!keyFitsAlgorithm(header.alg, keyObject)) return undefined
      check = createSignatureCheck(header.alg, keyObject)
      checks.set(key, check)
    }
    return check
  }

  const verifyToken = async (token: string): Promise<VerifiedAccess> => {
    const header = serviceHeader(token, algorithms)
    if (header !== null) {
      const check = await keyCheck(header)
      // recorded and used in one synchronous step: what the set says now decides, and a key it no longer holds
      // verifies nothing more (but the tokens it verified before, which the token service remembers until exp)
      if (check === undefined) resolved.delete(header.encoded)
      else resolved.set(header.encoded, check)
    }
    const subject = tokens.verifyAccessSubject(token)
    return { userId: subject.userId, role: subject.role ?? DEFAULT_ROLE }
  }
  return {
    verifyToken,
    verify: async (authorization) => verifyToken(bearerToken(authorization)),
  }
}

interface ServiceHeader {
  alg: AsymmetricAlgorithm
  kid: string
  /** The header as the token carries it, which is exactly what the service writes for that key. */
  encoded: string
}

/**
 * The header of `token` when it is one the service writes (`{"alg", "typ": "JWT", "kid"}` in that order, with an
 * accepted algorithm); null for any other, which no key is fetched for and the token service refuses.
 */
function serviceHeader(token: string, algorithms: readonly AsymmetricAlgorithm[]): ServiceHeader | null {
  const encoded = token.slice(0, Math.max(token.indexOf('.'), 0))
  let header: unknown
  try {
    header = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (typeof header !== 'object' || header === null) return null
  const { alg, kid } = header as { alg?: unknown; kid?: unknown }
  if (!algorithms.includes(alg as AsymmetricAlgorithm) || typeof kid !== 'string') return null
  const algorithm = alg as AsymmetricAlgorithm
  return encodedHeader(algorithm, kid) === encoded ? { alg: algorithm, kid, encoded } : null
}

function jwksUrlOf(options: RemoteAccessTokenVerifierOptions): URL {
  if ((options as { secret?: unknown }).secret !== undefined) {
    throw new ConfigError(
      'jwksUrl',
      'and secret exclude each other: a service signs access tokens with one or the other (AUTH_JWT_ALGORITHM)',
    )
  }
  const value = options.jwksUrl
  const url = value instanceof URL ? value : URL.canParse(String(value)) ? new URL(String(value)) : null
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ConfigError(
      'jwksUrl',
      'must be an http or https URL, such as https://auth.example.com/.well-known/jwks.json',
    )
  }
  return url
}

function positiveInteger(value: number | undefined): number {
  if (value === undefined) return 15
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError('accessTokenExpirationMinutes', 'must be a positive integer')
  }
  return value
}

function nonNegative(option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value < 0)
    throw new ConfigError(option, 'must be a number of milliseconds, 0 or more')
  return value
}
