import { randomInt } from 'node:crypto'

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
  return newCrockfordKey(RESET_KEY_LENGTH, GROUP)
}

/**
 * The reset key a request's text is, in one form whatever way it was written (28 characters, upper case, I and L as
 * 1, O as 0, no hyphens or white space): what its digest is made of. Null when the text is no reset key.
 */
export function readResetKey(text: string): string | null {
  return readCrockfordKey(text, RESET_KEY_LENGTH)
}

/**
 * `length` characters of Crockford's base32 from the system's cryptographic random source (5 bits each), in groups
 * of `group` joined by hyphens: a reset key, a recovery code (mfa/recovery-codes.ts).
 */
export function newCrockfordKey(length: number, group: number): string {
  let key = ''
  for (let i = 0; i < length; i++) key += ALPHABET[randomInt(ALPHABET.length)]
  return (key.match(new RegExp(`.{1,${group}}`, 'g')) as string[]).join('-')
}

/**
 * The key of `length` characters a text is, read as Crockford's base32 is read (either case, hyphens and white
 * space anywhere ignored, I and L as 1, O as 0), in one form: upper case, no separators. Null when it is none.
 */
export function readCrockfordKey(text: string, length: number): string | null {
  const key = text
    .replace(/[\s-]+/g, '')
    .toUpperCase()
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0')
  if (key.length !== length) return null
  for (const character of key) if (!ALPHABET.includes(character)) return null
  return key
}
