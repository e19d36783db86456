import type { FastifySchemaValidationError, FastifyServerOptions } from 'fastify'
import { isValidEmail } from '../auth/email.js'
import { isWellFormedPassword } from '../auth/password-policy.js'
import { type FieldError, ValidationError } from '../errors.js'

/**
 * Ajv as the schemas need it: no type coercion (a number where a string belongs is a 400, DECISIONS), nothing
 * removed or defaulted behind the caller's back, the first error only (allErrors is a DoS vector), and the service's
 * own `email` and `password` formats.
 */
export const ajvOptions: NonNullable<FastifyServerOptions['ajv']> = {
  customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
  onCreate(ajv) {
    // after ajv-formats, so these replace its looser `email`
    ajv.addFormat('email', { type: 'string', validate: isValidEmail })
    ajv.addFormat('password', { type: 'string', validate: isWellFormedPassword })
  },
}

/** Turns Fastify's schema validation failure into the 400 of DECISIONS, naming the field by JSON Pointer. */
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
      return { field: error.instancePath, message: `must have at least ${String(params.limit)} characters` }
    case 'maxLength':
      return { field: error.instancePath, message: `must have at most ${String(params.limit)} characters` }
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

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}
