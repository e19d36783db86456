/** spec 4.3 / 8: a password has 8 to 100 characters, counted as Unicode code points (DECISIONS). */
export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 100

/**
 * A password must be well-formed Unicode: a lone surrogate would be replaced when encoded to UTF-8 for hashing, so
 * two different strings could share a hash (DECISIONS: Password length).
 */
export function isWellFormedPassword(value: string): boolean {
  return value.isWellFormed()
}

export function passwordLength(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}

export function isAcceptablePassword(value: string): boolean {
  const length = passwordLength(value)
  return isWellFormedPassword(value) && length >= PASSWORD_MIN_LENGTH && length <= PASSWORD_MAX_LENGTH
}
