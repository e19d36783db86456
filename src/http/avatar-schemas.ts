import { Type } from 'typebox'
import {
  AvatarImageTooLargeError,
  AvatarTooLargeError,
  BadRequestError,
  MultipartRequiredError,
  NotFoundError,
  ServiceBusyError,
  UnsupportedImageError,
  ValidationError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { message } from '../language/message.js'
import {
  answer,
  failed,
  httpsRequired,
  LIMITED,
  refusal,
  retryLater,
  rateLimited as sharedRateLimited,
  unauthorized,
} from './response-parts.js'
import { AccountResponse } from './schemas.js'

// The requests and answers of docs/api.md §4.23, made of the parts in response-parts.ts.

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

/** What GET /avatars/{id} answers an image with: cached for ever, and never run as a document. */
export const AVATAR_IMAGE_HEADERS = {
  'cache-control': 'public, max-age=31536000, immutable',
  'content-security-policy': "default-src 'none'; sandbox",
} as const

const rateLimited = () =>
  sharedRateLimited(
    'More than RATE_LIMIT_PER_MINUTE changes of the avatar from this client address in a minute (R8.1)',
    LIMITED,
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
      new ValidationError([{ field: '/avatar', message: message('field.required') }]),
      new ValidationError([
        {
          field: '',
          message: message('field.avatar_form', { fields: MAX_OTHER_FIELDS }),
        },
      ]),
      new BadRequestError(400),
    ],
    LIMITED,
  ),
  401: unauthorized(),
  403: httpsRequired(),
  413: refusal(
    'The file is over 2 MB (2,097,152 bytes), or its header declares an image over 40 megapixels, over 16,384 pixels on a side, or interlaced or progressive and over 16 megapixels (8 at 16 bits per channel) (R4.23.2); nothing was decoded or changed',
    [new AvatarTooLargeError(), new AvatarImageTooLargeError()],
    LIMITED,
  ),
  415: refusal(
    'The body is not a form (multipart/form-data), or the file is not a JPEG, PNG or WebP image by its bytes, or does not decode',
    [new MultipartRequiredError(), new UnsupportedImageError()],
    LIMITED,
  ),
  429: rateLimited(),
  500: failed(LIMITED),
  503: retryLater(
    'Too many images wait to be decoded (R8.2), or the avatar may or may not have been changed (R7.3): retry',
    [new ServiceBusyError(), new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})

/** DELETE /auth/avatar (§4.23). */
export const removeAvatarResponses = () => ({
  200: answer(
    AccountResponse,
    'The account has no avatar (`avatar_url` null); its image, if it had one, is gone',
    LIMITED,
  ),
  401: unauthorized(),
  403: httpsRequired(),
  429: rateLimited(),
  500: failed(LIMITED),
  503: retryLater(
    'The avatar may or may not have been removed (R7.3): retry',
    [new WriteOutcomeUnknownError()],
    LIMITED,
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
