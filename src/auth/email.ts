/**
 * The WHATWG HTML "valid e-mail address" grammar (docs/api.md R2.1.2), applied to the trimmed value.
 * https://html.spec.whatwg.org/multipage/input.html#valid-e-mail-address
 */
const VALID_EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/

export const MAX_EMAIL_LENGTH = 254

/** True when the value, once trimmed, is a valid e-mail address of at most 254 characters. */
export function isValidEmail(value: string): boolean {
  const trimmed = value.trim()
  return trimmed.length <= MAX_EMAIL_LENGTH && VALID_EMAIL.test(trimmed)
}

/**
 * The form in which an e-mail is stored, compared and returned: trimmed and lower-cased, so that `A@X.io` and
 * `a@x.io` name the same account. Returns null for an invalid address.
 */
export function normalizeEmail(value: string): string | null {
  return isValidEmail(value) ? value.trim().toLowerCase() : null
}
