import { type TSchema, Type } from 'typebox'
import {
  AccessTokenInvalidError,
  type AppError,
  AuthorizationMalformedError,
  AuthorizationMissingError,
  AvatarTooLargeError,
  BadRequestError,
  HttpsRequiredError,
  InternalError,
  MultipartRequiredError,
  NotFoundError,
  RateLimitedError,
  ServiceBusyError,
  TokenWrongTypeError,
  UnsupportedImageError,
  ValidationError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { failure } from './envelope.js'
import { AccountResponse } from './schemas.js'

// The requests and answers of docs/api.md §4.23, in the form of responses.ts: a success is its schema with
// `x-response-description`, an error the shared ErrorResponse with examples made from the service's own errors.

/** The id of an avatar: 32 lowercase hexadecimal digits, a new one for each image. */
export const AVATAR_ID = /^[0-9a-f]{32}$/

/** Fields of a form besides `avatar` that are read and ignored (a form library's own); more is a 400. */
export const MAX_OTHER_FIELDS = 8

export const AvatarParams = Type.Object({
  id: Type.String({
    description: 'The id in `avatar_url`: 32 lowercase hexadecimal digits; anything else is a 404',
    examples: ['9b2e4c1a7f3d5e6b8a0c2d4e6f8a1b3c'],
  }),
})

/**
 * The form POST /auth/avatar takes, for the API document: the handler reads it with @fastify/multipart, since a
 * form is never parsed into a body that a schema could validate.
 */
export const AvatarForm = Type.Object(
  {
    avatar: Type.Unsafe<Buffer>({
      type: 'string',
      format: 'binary',
      description:
        'A JPEG, PNG or WebP image of at most 2 MB, its type read from its bytes (not its name or declared type)',
    }),
  },
  {
    required: ['avatar'],
    description: `One file, avatar; at most ${MAX_OTHER_FIELDS} other fields, ignored`,
  },
)

/** Response headers by name, each a JSON Schema with its description (@fastify/swagger's form). */
type Headers = Readonly<Record<string, { description: string; [keyword: string]: unknown }>>

const NO_STORE: Headers = {
  'Cache-Control': {
    type: 'string',
    const: 'no-store',
    description: 'Account data is kept by no cache (R1.12)',
  },
}
const LIMITED: Headers = {
  ...NO_STORE,
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
const RETRY_AFTER: Headers = {
  'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before trying again' },
}
const challenge = (error: AppError) => error.headers['www-authenticate']
const BEARER_CHALLENGE: Headers = {
  'WWW-Authenticate': {
    type: 'string',
    enum: [challenge(new AuthorizationMissingError()), challenge(new AccessTokenInvalidError())],
    description:
      '`Bearer` without credentials (R5.2.1, R5.2.2), `Bearer error="invalid_token"` for a refused token',
  },
}

/** What GET /avatars/{id} answers an image with: cached for ever, and never run as a document. */
export const AVATAR_IMAGE_HEADERS = {
  'cache-control': 'public, max-age=31536000, immutable',
  'content-security-policy': "default-src 'none'; sandbox",
} as const

/** A success: the schema the serializer compiles, with the description the document gives the answer. */
function answer<T extends TSchema>(schema: T, description: string, headers: Headers): T {
  return { ...schema, 'x-response-description': description, headers }
}

/** An error answer: the shared envelope, one example per error the status stands for, and its headers. */
function refusal(description: string, errors: readonly AppError[], headers?: Headers) {
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
  return `${error.code}${error.data.errors[0]?.field.replaceAll('/', '_') ?? ''}`
}

const unauthorized = (headers: Headers) =>
  refusal(
    'The access token is missing, not in the Bearer form, invalid or expired, or a refresh token (R5.2), or its account is gone (R4.7.2)',
    [
      new AuthorizationMissingError(),
      new AuthorizationMalformedError(),
      new AccessTokenInvalidError(),
      new TokenWrongTypeError(),
    ],
    { ...headers, ...BEARER_CHALLENGE },
  )
const httpsRequired = () =>
  refusal(
    'In production behind TRUST_PROXY, the request did not arrive over HTTPS; nothing was read or changed (R5.7.2)',
    [new HttpsRequiredError()],
    NO_STORE,
  )
const rateLimited = () =>
  refusal(
    'More than RATE_LIMIT_PER_MINUTE changes of the avatar from this client address in a minute (R8.1)',
    [new RateLimitedError(60)],
    { ...RETRY_AFTER, ...LIMITED },
  )
const failed = (headers?: Headers) =>
  refusal(
    'A failure the service did not foresee, such as a store that does not answer; nothing was changed (R7.1, R7.2)',
    [new InternalError()],
    headers,
  )

/** POST /auth/avatar (§4.23). */
export const uploadAvatarResponses = () => ({
  200: answer(
    AccountResponse,
    'The image is the avatar, re-encoded: the account with its new `avatar_url`; the previous image is gone',
    LIMITED,
  ),
  400: refusal(
    'The form has no file `avatar`, more than one file or too many fields, or is not well-formed multipart',
    [
      new ValidationError([{ field: '/avatar', message: 'is required' }]),
      new ValidationError([
        {
          field: '',
          message: `must be a form of one file, avatar, and at most ${MAX_OTHER_FIELDS} other fields`,
        },
      ]),
      new BadRequestError(400, 'Bad Request'),
    ],
    LIMITED,
  ),
  401: unauthorized(NO_STORE),
  403: httpsRequired(),
  413: refusal(
    'The file is over 2 MB (2,097,152 bytes); nothing was changed',
    [new AvatarTooLargeError()],
    LIMITED,
  ),
  415: refusal(
    'The body is not a form (multipart/form-data), or the file is not a JPEG, PNG or WebP image by its bytes, or does not decode',
    [new MultipartRequiredError(), new UnsupportedImageError()],
    LIMITED,
  ),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal(
    'Too many images wait to be decoded (R8.2), or the avatar may or may not have been changed (R7.3): retry',
    [new ServiceBusyError(), new WriteOutcomeUnknownError()],
    { ...RETRY_AFTER, ...LIMITED },
  ),
})

/** DELETE /auth/avatar (§4.23). */
export const removeAvatarResponses = () => ({
  200: answer(
    AccountResponse,
    'The account has no avatar (`avatar_url` null); its image, if it had one, is gone',
    LIMITED,
  ),
  401: unauthorized(NO_STORE),
  403: httpsRequired(),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal(
    'The avatar may or may not have been removed (R7.3): retry',
    [new WriteOutcomeUnknownError()],
    { ...RETRY_AFTER, ...LIMITED },
  ),
})

const binary = (description: string) => ({ schema: { type: 'string', format: 'binary', description } })

/** GET /avatars/{id} (§4.23): the image's bytes, in the type it was stored as. */
export const avatarImageResponses = () => ({
  200: {
    description: 'The avatar, as re-encoded at its upload; the same id always names the same bytes',
    headers: {
      'Cache-Control': {
        type: 'string',
        const: AVATAR_IMAGE_HEADERS['cache-control'],
        description: 'An id names one image for ever (a new upload has a new id): any cache may keep it',
      },
      'Content-Security-Policy': {
        type: 'string',
        const: AVATAR_IMAGE_HEADERS['content-security-policy'],
        description: 'Opened on its own, the image runs nothing and loads nothing',
      },
    },
    content: {
      'image/jpeg': binary('A JPEG avatar'),
      'image/png': binary('A PNG avatar'),
      'image/webp': binary('A WebP avatar'),
    },
  },
  404: refusal('No avatar has this id (removed, replaced, or never one)', [new NotFoundError()]),
  500: failed(),
})
