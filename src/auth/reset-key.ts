import { randomBytes } from 'node:crypto'

/**
 * The reset key (docs/api.md R4.14.2, R4.17): a second secret mailed beside each `reset_password` code, which wrong
 * tries at the codes cannot use up and nobody can guess. 28 characters of Crockford's base32, 140 bits from the
 * system's cryptographic random source, shown in seven groups of four (`7K3M-9QXD-…`) so that it can be read, copied
 * and pasted whole. As input it is read as Crockford's base32 is: in either case, hyphens and white space anywhere
 * ignored, I and L read as 1, O as 0; U is none of its characters.
 */

/** Crockford's base32: the digits and the letters but I, L, O and U. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
export const RESET_KEY_LENGTH = 28
const GROUP = 4

/**
 * A reset key as a request may give it (the `verification_code` of POST /auth/password/reset): 28 characters of
 * Crockford's base32 in either case (I, L and O too), with hyphens and white space before, between and after them.
 * No six-digit code matches it, nor it one.
 */
export const RESET_KEY_INPUT_PATTERN = `[\\s-]*(?:[0-9A-TV-Za-tv-z][\\s-]*){${RESET_KEY_LENGTH}}`

/** A new reset key, as the mail shows it: seven groups of four characters joined by hyphens. */
export function newResetKey(): string {
  const bytes = randomBytes(Math.ceil((RESET_KEY_LENGTH * 5) / 8))
  let bits = 0n
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte)
  // the first 140 of the 144 bits, five to a character
  bits >>= BigInt(bytes.length * 8 - RESET_KEY_LENGTH * 5)
  let key = ''
  for (let i = RESET_KEY_LENGTH - 1; i >= 0; i--) key += ALPHABET[Number((bits >> BigInt(i * 5)) & 31n)]
  return (key.match(new RegExp(`.{${GROUP}}`, 'g')) as string[]).join('-')
}

/**
 * The reset key a request's text is, in one form whatever way it was written (28 characters, upper case, I and L as
 * 1, O as 0, no hyphens or white space): what its digest is made of. Null when the text is no reset key.
 */
export function readResetKey(text: string): string | null {
  const key = text
    .replace(/[\s-]+/g, '')
    .toUpperCase()
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0')
  if (key.length !== RESET_KEY_LENGTH) return null
  for (const character of key) if (!ALPHABET.includes(character)) return null
  return key
}
