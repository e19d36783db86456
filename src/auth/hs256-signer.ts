import { createHmac, createSecretKey } from 'node:crypto'

/** The JOSE header of every token this service signs, encoded once. */
const ENCODED_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')

/**
 * Signs claims as a compact HS256 JWS (RFC 7515): base64url(header) "." base64url(claims) "." base64url(HMAC-SHA256),
 * byte for byte what fast-jwt's `createSigner({ algorithm: 'HS256' })` writes for the same claims (a test holds the
 * two side by side). fast-jwt verifies every token; it does not sign them because, per token, it rebuilds and
 * re-encodes the constant header, copies the claims twice and turns base64 into base64url with regular
 * expressions: 6.6 µs a token against 4.0 µs here (HMAC-SHA256 itself is 2.2 µs), and a refresh signs two.
 */
export function createHs256Signer(secret: string): (claims: object) => string {
  const key = createSecretKey(Buffer.from(secret, 'utf8'))
  return (claims) => {
    const input = `${ENCODED_HEADER}.${Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url')}`
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
  }
}
