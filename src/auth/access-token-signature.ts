import { type KeyObject, sign, verify } from 'node:crypto'
import type { AsymmetricAlgorithm } from '../config/signing-config.js'

/**
 * Access tokens signed with a private key (AUTH_JWT_ALGORITHM EdDSA or ES256), signed and checked with node:crypto
 * alone, so that the verifier package can use it without loading jose. Keys, their `kid` and the JWKS are made in
 * access-token-keys.ts.
 */

/**
 * What the token service needs of the access-token keys: a signer, and for a token the check of the one key its
 * header names.
 */
export interface AccessTokenKeyRing {
  /** The compact JWS of `claims`, with the header `{"alg", "typ": "JWT", "kid"}` of the signing key. */
  sign(claims: object): string
  /**
   * The signature check of the key `token`'s header names, or undefined when its header is not exactly the header of
   * one of the ring's keys (another `alg`, `none`, an unknown `kid`, any other field or order): such a token was
   * not signed with these keys. The check returns the token's payload, parsed, or null when the signature is not
   * that key's; it throws for a payload that is not JSON.
   */
  verifierFor(token: string): SignatureCheck | undefined
}

export type SignatureCheck = (token: string) => unknown

/** The JOSE header of an access token signed with the key `kid`, encoded: every such token starts with it. */
export function encodedHeader(algorithm: AsymmetricAlgorithm, kid: string): string {
  return Buffer.from(JSON.stringify({ alg: algorithm, typ: 'JWT', kid })).toString('base64url')
}

/** Whether `key` is a key of `algorithm`: Ed25519 for EdDSA, P-256 for ES256 (RFC 8037, RFC 7518 section 3.4). */
export function keyFitsAlgorithm(algorithm: AsymmetricAlgorithm, key: KeyObject): boolean {
  if (algorithm === 'EdDSA') return key.asymmetricKeyType === 'ed25519'
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
}

/**
 * The order of P-256 (SEC 2), and half of it: of the two valid `s` of an ECDSA signature, ES256 tokens carry the
 * low one.
 */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n
const P256_HALF_ORDER = Buffer.from((P256_ORDER >> 1n).toString(16).padStart(64, '0'), 'hex')
/** An Ed25519 signature and an ES256 one (r ‖ s, RFC 7518 section 3.4) are both 64 bytes. */
const SIGNATURE_BYTES = 64

/**
 * Signs claims as a compact JWS with `privateKey` (node:crypto's sign, as fast as fast-jwt's signer and with the
 * header encoded once, as createHs256Signer does for HS256). An ES256 signature is given its low `s`: ECDSA accepts
 * (r, s) and (r, n − s) alike, and a token must have one text (auth/base64url.ts), so the checker refuses the high one.
 */
export function createSignatureSigner(
  algorithm: AsymmetricAlgorithm,
  privateKey: KeyObject,
  kid: string,
): (claims: object) => string {
  const header = encodedHeader(algorithm, kid)
  if (algorithm === 'EdDSA') {
    return (claims) => {
      const input = `${header}.${Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url')}`
      return `${input}.${sign(null, Buffer.from(input, 'latin1'), privateKey).toString('base64url')}`
    }
  }
  const key = { key: privateKey, dsaEncoding: 'ieee-p1363' as const }
  return (claims) => {
    const input = `${header}.${Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url')}`
    const signature = sign('sha256', Buffer.from(input, 'latin1'), key)
    return `${input}.${withLowS(signature).toString('base64url')}`
  }
}

/** The ES256 signature (r ‖ s) with s replaced by n − s when s is over half the order. */
function withLowS(signature: Buffer): Buffer {
  const s = signature.subarray(32)
  if (Buffer.compare(s, P256_HALF_ORDER) <= 0) return signature
  const low = (P256_ORDER - BigInt(`0x${s.toString('hex')}`)).toString(16).padStart(64, '0')
  return Buffer.concat([signature.subarray(0, 32), Buffer.from(low, 'hex')])
}

/**
 * The check of a compact JWS's signature with `publicKey`: the payload, parsed, when the signature is the key's (and,
 * for ES256, the low-s one), null otherwise. The header is the caller's to have matched (AccessTokenKeyRing).
 */
export function createSignatureCheck(algorithm: AsymmetricAlgorithm, publicKey: KeyObject): SignatureCheck {
  const digest = algorithm === 'EdDSA' ? null : 'sha256'
  const key = algorithm === 'EdDSA' ? publicKey : { key: publicKey, dsaEncoding: 'ieee-p1363' as const }
  return (token) => {
    const payloadStart = token.indexOf('.') + 1
    const signatureStart = token.lastIndexOf('.') + 1
    if (payloadStart === 0 || signatureStart === payloadStart) return null
    const signature = Buffer.from(token.slice(signatureStart), 'base64url')
    if (signature.length !== SIGNATURE_BYTES) return null
    if (algorithm === 'ES256' && Buffer.compare(signature.subarray(32), P256_HALF_ORDER) > 0) return null
    if (!verify(digest, Buffer.from(token.slice(0, signatureStart - 1), 'latin1'), key, signature))
      return null
    return JSON.parse(
      Buffer.from(token.slice(payloadStart, signatureStart - 1), 'base64url').toString('utf8'),
    )
  }
}

/**
 * The ring of a signer and the public keys it verifies with, each under its `kid`: a token goes to the one key whose
 * encoded header it starts with, so no `alg` or `kid` a token names is ever looked up or trusted beyond that.
 */
export function createKeyRing(
  algorithm: AsymmetricAlgorithm,
  signer: (claims: object) => string,
  publicKeys: ReadonlyArray<{ kid: string; key: KeyObject }>,
): AccessTokenKeyRing {
  const checks = new Map(
    publicKeys.map(({ kid, key }) => [encodedHeader(algorithm, kid), createSignatureCheck(algorithm, key)]),
  )
  return {
    sign: signer,
    verifierFor(token) {
      const headerEnd = token.indexOf('.')
      return headerEnd < 0 ? undefined : checks.get(token.slice(0, headerEnd))
    },
  }
}
