import type { SchemaValidateFunction } from 'ajv'
import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify'
import { EMAIL_PATTERN, isValidEmail } from '../auth/email.js'
import { isWellFormedPassword, loginPasswordProblem, newPasswordProblem } from '../auth/password-policy.js'
import { type FieldError, ValidationError } from '../errors.js'
import { USERNAME_INPUT_PATTERN, USERNAME_RULE } from '../profile/profile-rules.js'

/**
 * The `x-password` keyword: the password policy itself, so that a request and the account service are refused with
 * one message. `'x-password': 'new'` is the rule of a new password (register), `'login'` the looser check of a login
 * password (any wrong one is a 401, spec 4.4 rule 1).
 */
const PASSWORD_CHECKS: Readonly<Record<string, (value: string) => string | null>> = {
  new: newPasswordProblem,
  login: loginPasswordProblem,
}

const checkPassword: SchemaValidateFunction = (mode: string, value: string) => {
  const problem = PASSWORD_CHECKS[mode]?.(value) ?? null
  checkPassword.errors =
    problem === null ? [] : [{ keyword: 'x-password', message: problem, params: { mode } }]
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

function describe(error: FastifySchemaValidationError): FieldError {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return { field: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' }
    case 'type':
      return { field: error.instancePath, message: `must be ${article(String(params.type))}` }
    case 'minLength':
      return {
        field: error.instancePath,
        message: params.limit === 1 ? 'must not be empty' : `must have at least ${characters(params.limit)}`,
      }
    case 'maxLength':
      return { field: error.instancePath, message: `must have at most ${characters(params.limit)}` }
    case 'x-password':
      // the password policy's own message (auth/password-policy.ts)
      return { field: error.instancePath, message: error.message ?? 'is invalid' }
    case 'pattern':
      // the e-mail's rule is a pattern (http/schemas.ts), so that the API document states it as it is applied
      return {
        field: error.instancePath,
        message:
          params.pattern === EMAIL_PATTERN
            ? 'must be a valid e-mail address'
            : params.pattern === USERNAME_INPUT_PATTERN
              ? USERNAME_RULE
              : (error.message ?? 'is invalid'),
      }
    case 'format':
      return {
        field: error.instancePath,
        message:
          params.format === 'email'
            ? 'must be a valid e-mail address'
            : 'must be well-formed Unicode (no lone surrogates)',
      }
    default:
      return { field: error.instancePath, message: error.message ?? 'is invalid' }
  }
}

function characters(count: unknown): string {
  return count === 1 ? '1 character' : `${String(count)} characters`
}

/** `a string`, `an object`; a type list (a field that null clears, docs/api.md §4.22) `a string or null`. */
function article(type: string): string {
  const [first = type, ...others] = type.split(',')
  const named = /^[aeiou]/.test(first) ? `an ${first}` : `a ${first}`
  return others.length === 0 ? named : `${named} or ${others.join(' or ')}`
}
