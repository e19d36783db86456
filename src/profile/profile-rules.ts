/**
 * The rules of the profile fields an account sets itself (docs/api.md §4.22). The request schema states the lengths
 * and the username's characters (one error naming the field); what a schema cannot say — white space around a value,
 * control characters, characters that hide or reorder text — is checked here, with the same kind of message.
 */

import type { FieldError } from '../errors.js'
import { message } from '../language/message.js'
import { hasHiddenCharacters } from './hidden-characters.js'

/** What a username may be as given: upper-case letters are accepted and lower-cased, so uniqueness ignores case. */
export const USERNAME_INPUT_PATTERN = '^[A-Za-z0-9_.-]{3,32}$'
export const NICKNAME_MAX_LENGTH = 64
export const BIO_MAX_LENGTH = 500

/** Characters no profile text holds: C0 and C1 controls (a bio's line breaks and tabs aside), and line separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u

/** The message of a nickname or bio with a bidirectional control or an invisible character (hidden-characters.ts). */
export const HIDDEN_RULE = message('field.hidden')

/** A problem with a field, as ValidationError names it. */
export type FieldProblem = FieldError

const USERNAME_INPUT = new RegExp(USERNAME_INPUT_PATTERN)
/** The message of a username that breaks the rule, from the schema or from here. */
export const USERNAME_RULE = message('field.username')

/** The username as stored: lower-case, so that uniqueness ignores case. */
export function normalizeUsername(username: string): string | FieldProblem {
  if (!USERNAME_INPUT.test(username)) return { field: '/username', message: USERNAME_RULE }
  return username.toLowerCase()
}

/**
 * The nickname as stored: trimmed, 1 to 64 characters (code points) of text, without controls and without characters
 * that hide or reorder text (emoji sequences keep their joiners). A string of white space only is a problem, not a way
 * to clear it (null clears it).
 */
export function normalizeNickname(nickname: string): string | FieldProblem {
  const trimmed = nickname.trim()
  const length = [...trimmed].length
  if (length < 1 || length > NICKNAME_MAX_LENGTH)
    return { field: '/nickname', message: message('field.nickname_length', { max: NICKNAME_MAX_LENGTH }) }
  if (!trimmed.isWellFormed() || CONTROL.test(trimmed))
    return { field: '/nickname', message: message('field.controls') }
  if (hasHiddenCharacters(trimmed)) return { field: '/nickname', message: HIDDEN_RULE }
  return trimmed
}

/**
 * The bio as stored: trimmed, at most 500 characters (code points); line breaks and tabs are kept, other controls
 * and characters that hide or reorder text refused, as in a nickname; an empty bio is none (null).
 */
export function normalizeBio(bio: string): string | null | FieldProblem {
  const trimmed = bio.replace(/\r\n?/g, '\n').trim()
  if (trimmed === '') return null
  if ([...trimmed].length > BIO_MAX_LENGTH)
    return { field: '/bio', message: message('field.bio_length', { max: BIO_MAX_LENGTH }) }
  if (!trimmed.isWellFormed() || CONTROL.test(trimmed.replace(/[\n\t]/g, '')))
    return { field: '/bio', message: message('field.bio_controls') }
  if (hasHiddenCharacters(trimmed)) return { field: '/bio', message: HIDDEN_RULE }
  return trimmed
}
