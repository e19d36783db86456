import { ConfigError } from './config-error.js'
import { type EnvReader, shownValue } from './env-reader.js'
import type { Environment } from './environment.js'
import { isLoopbackHost } from './server-config.js'

/**
 * AUTH_JWT_ALGORITHM: how access tokens are signed. HS256 (the specification's, the default) with AUTH_JWT_SECRET;
 * EdDSA (Ed25519) or ES256 (ECDSA on P-256) with a private key whose public half any other service can fetch from
 * the JWKS and verify with, holding no secret that mints tokens. Refresh tokens are HS256 in every mode: only the
 * service reads them.
 */
export const ACCESS_TOKEN_ALGORITHMS = ['HS256', 'EdDSA', 'ES256'] as const
export type AccessTokenAlgorithm = (typeof ACCESS_TOKEN_ALGORITHMS)[number]
export type AsymmetricAlgorithm = Exclude<AccessTokenAlgorithm, 'HS256'>

/** The signing of access tokens (docs/api.md §2.3, §5.5, §5.9). Files are named here and read at start. */
export interface SigningConfig {
  algorithm: AccessTokenAlgorithm
  /**
   * AUTH_JWT_PRIVATE_KEY_FILE: the PEM (PKCS#8) private key of EdDSA or ES256. null with HS256, and in development
   * when unset: the service then keeps a generated key pair in DATA_DIR.
   */
  privateKeyFile: string | null
  /** AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES: PEM public keys still accepted and published in the JWKS (key rotation). */
  previousPublicKeyFiles: readonly string[]
  /** AUTH_JWT_ISSUER: the `iss` claim of every access token, then required of them; null (the default) for none. */
  issuer: string | null
}

/** The longest AUTH_JWT_ISSUER: a URL or a name, never a document. */
const MAX_ISSUER_LENGTH = 256

/**
 * AUTH_JWT_ALGORITHM, AUTH_JWT_PRIVATE_KEY_FILE, AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES and AUTH_JWT_ISSUER, and what
 * PUBLIC_URL must be for them. Production with EdDSA or ES256 needs a key file of its own (a key generated on the
 * machine would differ on every instance) and PUBLIC_URL (the discovery document names the JWKS by an absolute URL,
 * which is never taken from a request's Host header). Performs no I/O.
 */
export function readSigningConfig(
  read: EnvReader,
  context: { env: Environment; publicUrl: string | null },
): SigningConfig {
  const algorithm = read.oneOf('AUTH_JWT_ALGORITHM', ACCESS_TOKEN_ALGORITHMS, 'HS256')
  const privateKeyFile = read.optional('AUTH_JWT_PRIVATE_KEY_FILE')
  const previousPublicKeyFiles = read.list('AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES')
  // a key named for HS256 would sign nothing: the operator believes in a set-up the service is not running
  if (algorithm === 'HS256') {
    if (privateKeyFile !== null) {
      throw new ConfigError(
        'AUTH_JWT_PRIVATE_KEY_FILE',
        'is set, but AUTH_JWT_ALGORITHM is HS256 (the default)',
      )
    }
    if (previousPublicKeyFiles.length > 0) {
      throw new ConfigError(
        'AUTH_JWT_PREVIOUS_PUBLIC_KEY_FILES',
        'is set, but AUTH_JWT_ALGORITHM is HS256 (the default)',
      )
    }
  }
  if (context.env === 'production' && algorithm !== 'HS256') {
    if (privateKeyFile === null) {
      throw new ConfigError(
        'AUTH_JWT_PRIVATE_KEY_FILE',
        `must be set in production with AUTH_JWT_ALGORITHM=${algorithm} (tessera keys generate writes one)`,
      )
    }
    if (context.publicUrl === null) {
      throw new ConfigError(
        'PUBLIC_URL',
        `must be set in production with AUTH_JWT_ALGORITHM=${algorithm}: /.well-known/openid-configuration names the JWKS by its absolute URL`,
      )
    }
  }
  // the JWKS URL is where other services fetch the keys they trust: over http, anyone on the path could swap them
  if (context.env === 'production' && context.publicUrl !== null) {
    const url = new URL(context.publicUrl)
    if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
      throw new ConfigError(
        'PUBLIC_URL',
        `must be an https URL in production (http only on a loopback address), got ${shownValue(context.publicUrl)}`,
      )
    }
  }
  return { algorithm, privateKeyFile, previousPublicKeyFiles, issuer: readIssuer(read) }
}

/**
 * AUTH_JWT_ISSUER: a StringOrURI (RFC 7519 section 2), compared as it is written: a name without a colon, or an
 * absolute URL such as the service's PUBLIC_URL, which is what OpenID Connect clients expect.
 */
function readIssuer(read: EnvReader): string | null {
  const issuer = read.optional('AUTH_JWT_ISSUER')
  if (issuer === null) return null
  const printable = !/[\s\p{Cc}]/u.test(issuer) && issuer.length <= MAX_ISSUER_LENGTH
  if (!printable || (issuer.includes(':') && !URL.canParse(issuer))) {
    throw new ConfigError(
      'AUTH_JWT_ISSUER',
      `must be a URL or a name without a colon, of at most ${MAX_ISSUER_LENGTH} characters and no spaces, got ${shownValue(issuer)}`,
    )
  }
  return issuer
}
