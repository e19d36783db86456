import { type TSchema, Type } from 'typebox'
import {
  AccessTokenInvalidError,
  type AppError,
  AuthorizationMalformedError,
  AuthorizationMissingError,
  HttpsRequiredError,
  InternalError,
  PayloadTooLargeError,
  RateLimitedError,
  TokenWrongTypeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors.js'
import { failure } from './envelope.js'

// The parts every operation's answers are made of (responses.ts, avatar-schemas.ts, provider-schemas.ts): a success
// is its schema with `x-response-description` (which the serializer ignores), an error the shared ErrorResponse with
// examples made from the service's own errors, so their messages cannot drift; and the headers they carry.

/** Response headers by name, each a JSON Schema with its description (@fastify/swagger's form). */
export type Headers = Readonly<Record<string, { description: string; [keyword: string]: unknown }>>

export const NO_STORE: Headers = {
  'Cache-Control': {
    type: 'string',
    const: 'no-store',
    description: 'Tokens and account data are kept by no cache (R1.12)',
  },
}

const RATE_LIMIT: Headers = {
  'X-RateLimit-Limit': {
    type: 'integer',
    minimum: 1,
    description:
      'Requests allowed per client address and minute (RATE_LIMIT_PER_MINUTE; absent when it is 0)',
  },
  'X-RateLimit-Remaining': {
    type: 'integer',
    minimum: 0,
    description: 'Requests left in the current window (absent when RATE_LIMIT_PER_MINUTE is 0)',
  },
  'X-RateLimit-Reset': {
    type: 'integer',
    minimum: 0,
    description: 'Seconds until the current window ends (absent when RATE_LIMIT_PER_MINUTE is 0)',
  },
}

/** The headers of an answer of a rate-limited operation (R8.1): no-store and the window's counts. */
export const LIMITED: Headers = { ...NO_STORE, ...RATE_LIMIT }

export const RETRY_AFTER: Headers = {
  'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before trying again' },
}

/** The WWW-Authenticate header an error sends. */
export const challenge = (error: AppError) => error.headers['www-authenticate']

/** R5.4: a protected endpoint's 401 names the scheme, and says `invalid_token` when a token was refused. */
export const BEARER_CHALLENGE: Headers = {
  'WWW-Authenticate': {
    type: 'string',
    enum: [challenge(new AuthorizationMissingError()), challenge(new AccessTokenInvalidError())],
    description:
      '`Bearer` without credentials (R5.2.1, R5.2.2), `Bearer error="invalid_token"` for a refused token',
  },
}

/** A success: the schema the serializer compiles, with the description the document gives the answer. */
export function answer<T extends TSchema>(schema: T, description: string, headers?: Headers): T {
  return { ...schema, 'x-response-description': description, ...(headers ? { headers } : {}) }
}

/** An error answer: the shared envelope, one example per error the status stands for, and its headers. */
export function refusal(description: string, errors: readonly AppError[], headers?: Headers) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: {
      'application/json': {
        schema: Type.Ref('ErrorResponse'),
        examples: Object.fromEntries(
          errors.map((error) => [exampleName(error), { summary: error.message, value: failure(error) }]),
        ),
      },
    },
  }
}

/** An example's name: the error's stable code, with the field for a validation error. */
function exampleName(error: AppError): string {
  if (!(error instanceof ValidationError)) return error.code
  return `${error.code}${error.errors[0]?.field.replaceAll('/', '_') ?? ''}`
}

export const httpsRequired = () =>
  refusal(
    'In production behind TRUST_PROXY, the request did not arrive over HTTPS; nothing was read or changed (R5.7.2)',
    [new HttpsRequiredError()],
    NO_STORE,
  )

export const tooLarge = (headers?: Headers) =>
  refusal('The body is over 16 KiB; nothing was changed (R1.9)', [new PayloadTooLargeError()], headers)

export const notJson = (headers?: Headers) =>
  refusal('A body of a type other than application/json (R1.3)', [new UnsupportedMediaTypeError()], headers)

export const failed = (headers?: Headers) =>
  refusal(
    'A failure the service did not foresee, such as a store that does not answer; nothing was changed (R7.1, R7.2)',
    [new InternalError()],
    headers,
  )

/** A refusal to try again later: with Retry-After (R7.3, R8.1, R8.2). */
export const retryLater = (description: string, errors: readonly AppError[], headers: Headers) =>
  refusal(description, errors, { ...RETRY_AFTER, ...headers })

export const rateLimited = (description: string, headers: Headers) =>
  retryLater(description, [new RateLimitedError(60)], headers)

/** A protected operation's 401 (R5.2, R4.7.2), with its challenge. */
export const unauthorized = () =>
  refusal(
    'The access token is missing, not in the Bearer form, invalid or expired, or a refresh token (R5.2), or its account is gone (R4.7.2)',
    [
      new AuthorizationMissingError(),
      new AuthorizationMalformedError(),
      new AccessTokenInvalidError(),
      new TokenWrongTypeError(),
    ],
    { ...NO_STORE, ...BEARER_CHALLENGE },
  )
