import { type Message, message } from '../language/message.js'

/** spec 4.3 / 8: a password has 8 to 100 characters, counted as Unicode code points (docs/api.md R2.1.5). */
export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 100

/**
 * The one message for a password that cannot be registered, whichever half of the rule it breaks: the request
 * schema (http/validation.ts) and the account service both answer with it.
 */
const PASSWORD_RULE = message('field.new_password', { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH })

/** The message for a login password that no account can have: too long, or not well-formed. */
const LOGIN_PASSWORD_RULE = message('field.login_password', { max: PASSWORD_MAX_LENGTH })

const EMPTY_PASSWORD = message('field.not_empty')

/**
 * A password must be well-formed Unicode: a lone surrogate would be replaced when encoded to UTF-8 for hashing, so
 * two different strings could share a hash (docs/api.md R2.1.5).
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

/** Why a new password (register) is refused, as the message for the client; null when it is acceptable. */
export function newPasswordProblem(value: string): Message | null {
  return isAcceptablePassword(value) ? null : PASSWORD_RULE
}

/**
 * Why a login password is refused before any account is looked at; null when it is worth checking. A wrong password
 * of any length up to the maximum is checked, and so a 401 like any other wrong password (spec 4.4 rule 1): only
 * an empty one, or one that no account can have, is a 400.
 */
export function loginPasswordProblem(value: string): Message | null {
  if (value === '') return EMPTY_PASSWORD
  if (!isWellFormedPassword(value) || passwordLength(value) > PASSWORD_MAX_LENGTH) return LOGIN_PASSWORD_RULE
  return null
}
