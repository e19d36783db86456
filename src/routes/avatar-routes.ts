import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { AccountEvents } from '../auth/account-events.js'
import type { AccountService } from '../auth/account-service.js'
import { AVATAR_MAX_BYTES } from '../avatars/avatar-image.js'
import type { AvatarService } from '../avatars/avatar-service.js'
import {
  AppError,
  AvatarTooLargeError,
  BadRequestError,
  MultipartRequiredError,
  NotFoundError,
  ValidationError,
} from '../errors.js'
import { accountData } from '../http/account-data.js'
import {
  AVATAR_ID,
  AVATAR_IMAGE_HEADERS,
  AvatarForm,
  AvatarParams,
  avatarImageResponses,
  MAX_OTHER_FIELDS,
  removeAvatarResponses,
  uploadAvatarResponses,
} from '../http/avatar-schemas.js'
import { success } from '../http/envelope.js'
import { message } from '../language/message.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'

const BEARER_AUTH = [{ bearerAuth: [] }]

/**
 * The most a request to POST /auth/avatar may declare: the file's 2 MB and room for the form around it (the boundary
 * lines, the part's headers and the few other fields taken). Above it, a 413 before anything is read.
 */
const AVATAR_BODY_LIMIT = AVATAR_MAX_BYTES + 32 * 1024

/** Whom an event is for: the request's client address and id. */
const requestContext = (request: FastifyRequest): RequestContext => ({
  clientAddress: request.ip,
  requestId: request.id,
})

export interface AvatarRoutesOptions {
  avatars: AvatarService
  /** What the answers show: the account as it is after the change. */
  accounts: Pick<AccountService, 'me'>
  /** BASE_PATH, which `avatar_url` carries. */
  basePath: string
  /** Records avatar_changed and avatar_removed (docs/api.md §6.3). */
  record: RecordSecurityEvent
  /** Where `user.updated` goes (docs/api.md R6.5.9), queued before the answer. */
  webhooks: Pick<AccountEvents, 'updated'>
  /** Per-route rate limit of the changes, as the other writes (docs/api.md R8.1); null when limiting is off. */
  rateLimit: { max: number; timeWindow: number } | null
}

/** docs/api.md §4.23: POST and DELETE /auth/avatar, registered inside the scope that runs the authentication guard. */
export const protectedAvatarRoutes: FastifyPluginAsyncTypebox<AvatarRoutesOptions> = async (app, options) => {
  const { avatars, accounts, basePath, record, webhooks, rateLimit } = options
  app.delete(
    '/auth/avatar',
    {
      config: { rateLimit: rateLimit ?? false },
      schema: {
        operationId: 'removeAvatar',
        tags: ['auth'],
        summary: "Remove the account's avatar",
        description:
          'Removes the avatar: `avatar_url` becomes null and the image is no longer served. Takes no body. An account without an avatar gets the same answer.',
        security: BEARER_AUTH,
        response: removeAvatarResponses(),
      },
    },
    async (request) => {
      if (await avatars.remove(request.userId)) {
        record('avatar_removed', request.userId, requestContext(request))
        await webhooks.updated(request.userId, ['avatar'])
      }
      return success(accountData(await accounts.me(request.userId), basePath))
    },
  )
  // the form's parser, in a scope of its own: every other route takes JSON alone (docs/api.md R1.3)
  await app.register(uploadRoute, options)
}

/** POST /auth/avatar, the one route whose body is a form and may be larger than 16 KiB. */
const uploadRoute: FastifyPluginAsyncTypebox<AvatarRoutesOptions> = async (app, options) => {
  const { avatars, accounts, basePath, record, webhooks, rateLimit } = options
  app.removeAllContentTypeParsers()
  await app.register(multipart, {
    limits: {
      // busboy refuses a file only when it is longer than this: exactly 2 MB is taken, one byte more is a 413
      fileSize: AVATAR_MAX_BYTES,
      files: 1,
      fields: MAX_OTHER_FIELDS,
      fieldSize: 1024,
      fieldNameSize: 100,
      parts: MAX_OTHER_FIELDS + 1,
      headerPairs: 16,
    },
  })
  app.addContentTypeParser('*', (_request, _payload, done) => done(new MultipartRequiredError(), undefined))
  // the form is read by the multipart parser as it streams, not by Fastify's body reader (whose bodyLimit would not
  // apply): its own limits bound what is kept, and a declared length over the form's largest is refused here,
  // before a byte is read
  app.addHook('onRequest', (request, _reply, done) => {
    const declared = Number(request.headers['content-length'])
    done(declared > AVATAR_BODY_LIMIT ? new AvatarTooLargeError() : undefined)
  })
  app.post(
    '/auth/avatar',
    {
      config: { rateLimit: rateLimit ?? false },
      // the body schema documents the form in the API document; a form is never a parsed body to validate
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'uploadAvatar',
        tags: ['auth'],
        summary: 'Upload an avatar',
        description:
          "Makes the image the account's avatar, replacing any previous one (whose URL is then a 404). A form (`multipart/form-data`) with one file, `avatar`: a JPEG, PNG or WebP image of at most 2 MB, its type read from its bytes. The image is decoded and encoded again, cut to a centred square of at most 512 pixels, turned upright by its EXIF orientation, with every metadata field removed (EXIF, GPS position included, XMP, IPTC, ICC profile, comments). Answers the account with its new `avatar_url`.",
        security: BEARER_AUTH,
        consumes: ['multipart/form-data'],
        body: AvatarForm,
        response: uploadAvatarResponses(),
      },
    },
    async (request) => {
      const bytes = await readAvatarFile(request)
      await avatars.upload(request.userId, bytes)
      record('avatar_changed', request.userId, requestContext(request))
      await webhooks.updated(request.userId, ['avatar'])
      return success(accountData(await accounts.me(request.userId), basePath))
    },
  )
}

/**
 * The bytes of the form's file `avatar`, read whole (at most 2 MB). The other fields are read and ignored; what the
 * multipart parser refuses becomes the service's own error.
 */
async function readAvatarFile(request: FastifyRequest): Promise<Buffer> {
  if (!request.isMultipart()) throw new MultipartRequiredError()
  let avatar: Buffer | null = null
  let avatarIsText = false
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer()
        if (part.fieldname === 'avatar') avatar = bytes
      } else if (part.fieldname === 'avatar') {
        avatarIsText = true
      }
    }
  } catch (error) {
    throw formError(error)
  }
  if (avatar === null) {
    throw new ValidationError([
      { field: '/avatar', message: message(avatarIsText ? 'field.file' : 'field.required') },
    ])
  }
  return avatar
}

/** The multipart parser's refusals (its error codes, or busboy's own errors) as the service's errors. */
function formError(error: unknown): AppError {
  if (error instanceof AppError) return error
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new AvatarTooLargeError()
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ValidationError([
      {
        field: '',
        message: message('field.avatar_form', { fields: MAX_OTHER_FIELDS }),
      },
    ])
  }
  // no boundary, a form cut short, a malformed part: the request is not a form (R1.13's 400)
  return new BadRequestError(400, error)
}

/**
 * docs/api.md §4.23: GET /avatars/<id>, public and outside the credentials scope, so that any cache may keep it (its
 * id changes with every image). Registered under BASE_PATH like every route.
 */
export const avatarImageRoutes: FastifyPluginAsyncTypebox<{ avatars: Pick<AvatarService, 'get'> }> = async (
  app,
  { avatars },
) => {
  app.get(
    '/avatars/:id',
    {
      schema: {
        operationId: 'getAvatar',
        tags: ['auth'],
        summary: 'An avatar image',
        description:
          "The image an account's `avatar_url` names, as re-encoded at its upload, with its type (JPEG, PNG or WebP). An id names one image for ever, so the answer may be cached for a year (`immutable`); a removed or replaced avatar's id is a 404. Public: an `<img>` loads it without a token.",
        security: [],
        params: AvatarParams,
        response: avatarImageResponses(),
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const avatar = AVATAR_ID.test(id) ? await avatars.get(id) : null
      if (avatar === null) throw new NotFoundError()
      return reply.type(avatar.contentType).headers(AVATAR_IMAGE_HEADERS).send(avatar.data)
    },
  )
}
