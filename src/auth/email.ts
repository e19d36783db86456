/**
 * The WHATWG HTML "valid e-mail address" grammar (docs/api.md R2.1.2), applied to the trimmed value.
 * https://html.spec.whatwg.org/multipage/input.html#valid-e-mail-address
 */
const VALID_EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/

export const MAX_EMAIL_LENGTH = 254

/**
 * isValidEmail as one ECMA-262 regular expression, for the API document (a JSON Schema `pattern`) and whatever
 * validates requests from it: white space around the address (which isValidEmail trims), at most 254 characters
 * once it is trimmed, and the WHATWG grammar. `format: email` would not do: validators read it as RFC 5321, which
 * refuses addresses this service accepts, such as `a.@example.com`. test/auth/email.test.ts holds the two to the
 * same answers.
 */
export const EMAIL_PATTERN = `^\\s*(?=\\S{1,${MAX_EMAIL_LENGTH}}\\s*$)${VALID_EMAIL.source.slice(1, -1)}\\s*$`

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
