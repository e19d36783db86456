import type { SchemaValidateFunction } from 'ajv'
import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify'
import { EMAIL_PATTERN, isValidEmail } from '../auth/email.js'
import { isWellFormedPassword, loginPasswordProblem, newPasswordProblem } from '../auth/password-policy.js'
import { type FieldError, ValidationError } from '../errors.js'
import { english } from '../language/catalogues.js'
import { counted, type Message, message } from '../language/message.js'
import { USERNAME_INPUT_PATTERN, USERNAME_RULE } from '../profile/profile-rules.js'
import { ADMIN_PATTERN_PROBLEMS } from './admin-schemas.js'
import { RESET_CODE_PATTERN, VERIFICATION_CODE_PATTERN } from './schemas.js'

/**
 * The `x-password` keyword: the password policy itself, so that a request and the account service are refused with
 * one message. `'x-password': 'new'` is the rule of a new password (register), `'login'` the looser check of a login
 * password (any wrong one is a 401, spec 4.4 rule 1).
 */
const PASSWORD_CHECKS: Readonly<Record<string, (value: string) => Message | null>> = {
  new: newPasswordProblem,
  login: loginPasswordProblem,
}

const checkPassword: SchemaValidateFunction = (mode: string, value: string) => {
  const problem = PASSWORD_CHECKS[mode]?.(value) ?? null
  checkPassword.errors =
    problem === null ? [] : [{ keyword: 'x-password', message: english(problem), params: { mode, problem } }]
  return problem === null
}

/**
 * Ajv as the schemas need it: no type coercion (a number where a string belongs is a 400, docs/api.md R1.7), nothing
 * removed or defaulted behind the caller's back, the first error only (allErrors is a DoS vector), and the service's
 * own `email` and `password` formats and `x-password` keyword.
 */
export const ajvOptions: NonNullable<FastifyServerOptions['ajv']> = {
  customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
  onCreate(ajv) {
    // after ajv-formats, so these replace its looser `email`
    ajv.addFormat('email', { type: 'string', validate: isValidEmail })
    ajv.addFormat('password', { type: 'string', validate: isWellFormedPassword })
    ajv.addKeyword({
      keyword: 'x-password',
      type: 'string',
      schemaType: 'string',
      metaSchema: { enum: Object.keys(PASSWORD_CHECKS) },
      // checked before maxLength, minLength and format: with the first error only, the policy's message is the one
      // a client reads, and those keywords stay in the schema to document the limits in the OpenAPI document
      before: 'maxLength',
      errors: true,
      validate: checkPassword,
    })
  },
}

/** Turns Fastify's schema validation failure into the 400 of docs/api.md R1.6, naming the field by JSON Pointer. */
export function toValidationError(errors: readonly FastifySchemaValidationError[]): ValidationError {
  return new ValidationError(errors.map(describe))
}

/**
 * The keywords of the request schemas whose failure has a text of its own in the catalogues; any other would be
 * `is invalid` (a test holds every keyword of every route's request schemas to this list).
 */
export const DESCRIBED_KEYWORDS = [
  'required',
  'type',
  'minLength',
  'maxLength',
  'x-password',
  'pattern',
  'format',
  'enum',
] as const

function describe(error: FastifySchemaValidationError): FieldError {
  const params = error.params as Record<string, unknown>
  const field = error.instancePath
  switch (error.keyword as (typeof DESCRIBED_KEYWORDS)[number]) {
    case 'required':
      return { field: `${field}/${String(params.missingProperty)}`, message: message('field.required') }
    case 'type':
      return { field, message: message('field.type', { type: typeName(String(params.type)) }) }
    case 'minLength':
      return {
        field,
        message:
          params.limit === 1
            ? message('field.not_empty')
            : message('field.min_length', { length: characters(params.limit) }),
      }
    case 'maxLength':
      return { field, message: message('field.max_length', { length: characters(params.limit) }) }
    case 'x-password':
      // the password policy's own message (auth/password-policy.ts)
      return { field, message: (params.problem as Message | undefined) ?? message('field.invalid') }
    case 'pattern':
      // the e-mail's rule is a pattern (http/schemas.ts), so that the API document states it as it is applied
      return { field, message: patternProblem(String(params.pattern)) }
    case 'format':
      return {
        field,
        message: params.format === 'email' ? message('field.email') : message('field.unicode'),
      }
    case 'enum':
      return { field, message: message('field.enum') }
    default:
      return { field, message: message('field.invalid') }
  }
}

function patternProblem(pattern: string): Message {
  if (pattern === EMAIL_PATTERN) return message('field.email')
  if (pattern === USERNAME_INPUT_PATTERN) return USERNAME_RULE
  // the same English as any pattern; a language may say it in words (`6 digits`)
  if (pattern === VERIFICATION_CODE_PATTERN) return message('field.verification_code', { pattern })
  if (pattern === RESET_CODE_PATTERN) return message('field.reset_code')
  return ADMIN_PATTERN_PROBLEMS.get(pattern) ?? message('field.pattern', { pattern })
}

function characters(count: unknown): Message {
  return counted('length.characters', Number(count))
}

/** `a string`, `an object`; a type list (a field that null clears, docs/api.md §4.22) `a string or null`. */
function typeName(type: string): Message {
  const [first = type, ...others] = type.split(',')
  return others.reduce<Message>(
    (named, other) => message('type.either', { first: named, second: message(`type.${other}`) }),
    message(`type.${first}`),
  )
}
