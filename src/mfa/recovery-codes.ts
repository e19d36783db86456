import { newCrockfordKey, readCrockfordKey } from '../auth/reset-key.js'

/**
 * Recovery codes (docs/api.md §4.25): ten at a time, each good once, for when the authenticator is lost. A code is 12
 * characters of Crockford's base32 (60 bits from the system's cryptographic random source), shown in three groups of
 * four (`7K3M-9QXD-4RTA`); read as Crockford's base32 is read: either case, hyphens and white space ignored, I and L
 * as 1, O as 0. Stored only as keyed digests (factor-secrets.ts).
 */
export const RECOVERY_CODES = 10
const LENGTH = 12
const GROUP = 4

/** A recovery code as a request may give it: 12 characters of base32, with hyphens or spaces anywhere. */
export const RECOVERY_CODE_INPUT_PATTERN = `[\\s-]*(?:[0-9A-TV-Za-tv-z][\\s-]*){${LENGTH}}`

/** A new set of codes, as shown once to the account holder. */
export function newRecoveryCodes(): string[] {
  const codes = new Set<string>()
  while (codes.size < RECOVERY_CODES) codes.add(newCrockfordKey(LENGTH, GROUP))
  return [...codes]
}

/** The code a request's text is, in one form (12 characters, upper case, no separators); null when it is none. */
export const readRecoveryCode = (text: string): string | null => readCrockfordKey(text, LENGTH)
