const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const SEGMENTS = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/

/**
 * True when `text` is the one base64url encoding (RFC 4648 section 5, unpadded) of some bytes: only the alphabet's
 * characters, a length that whole bytes can have (not 1 more than a multiple of 4), and the bits of the last
 * character that encode no byte all zero. A decoder ignores those bits, so without this check several texts (up to
 * 16 for a 32-byte HMAC) decode to the same bytes.
 */
export function isCanonicalBase64url(text: string): boolean {
  const rest = text.length % 4
  if (rest === 1) return false
  if (rest === 0) return true
  // 2 characters carry one byte and 4 spare bits, 3 characters two bytes and 2 spare bits
  const value = ALPHABET.indexOf(text.charAt(text.length - 1))
  return value >= 0 && value % (rest === 2 ? 16 : 4) === 0
}

/**
 * True when `token` has the form of a compact JWS (header.payload.signature) and each of its three parts is
 * canonical base64url, so that one signed token has exactly one text (RFC 7515 section 7.1 forbids padding and
 * line breaks, and a verifier that accepted other texts would let a token be altered without changing its meaning).
 */
export function isCanonicalCompactJws(token: string): boolean {
  const parts = SEGMENTS.exec(token)
  return (
    parts !== null &&
    isCanonicalBase64url(parts[1] as string) &&
    isCanonicalBase64url(parts[2] as string) &&
    isCanonicalBase64url(parts[3] as string)
  )
}
