import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as commandErrors from '../src/commands/command-errors.js'
import * as config from '../src/config.js'
import * as errors from '../src/errors.js'
import { AppError, ERROR_CODES, TesseraError } from '../src/errors.js'
import { toAppError } from '../src/http/error-handler.js'
import { catalogues, languages, render } from '../src/language/catalogues.js'
import { message } from '../src/language/message.js'
import * as siteConfigErrors from '../src/site-config/site-config-errors.js'

/** Every error the service answers with: status, stable code and public text. A new one must be added here. */
const EXPECTED: Record<string, { error: AppError; status: number; code: string; message: string }> = {
  ValidationError: {
    error: new errors.ValidationError([{ field: '/email', message: message('field.email') }]),
    status: 400,
    code: 'validation_failed',
    message: 'Invalid request: /email must be a valid e-mail address',
  },
  MalformedBodyError: {
    error: new errors.MalformedBodyError(),
    status: 400,
    code: 'malformed_body',
    message: 'Request body is not valid JSON',
  },
  BadRequestError: {
    error: new errors.BadRequestError(400),
    status: 400,
    code: 'bad_request',
    message: 'Bad Request',
  },
  InvalidCredentialsError: {
    error: new errors.InvalidCredentialsError(),
    status: 401,
    code: 'invalid_credentials',
    message: 'E-mail or password wrong',
  },
  CodeRefusedError: {
    error: new errors.CodeRefusedError(),
    status: 400,
    code: 'code_refused',
    message: 'Invalid or expired verification code',
  },
  PasswordIncorrectError: {
    error: new errors.PasswordIncorrectError(),
    status: 400,
    code: 'password_incorrect',
    message: 'Password is incorrect',
  },
  MailUnavailableError: {
    error: new errors.MailUnavailableError(),
    status: 503,
    code: 'mail_unavailable',
    message: 'E-mail is not configured on this server (SMTP_URL)',
  },
  AuthorizationMissingError: {
    error: new errors.AuthorizationMissingError(),
    status: 401,
    code: 'authorization_missing',
    message: 'Authorization header is missing',
  },
  AuthorizationMalformedError: {
    error: new errors.AuthorizationMalformedError(),
    status: 401,
    code: 'authorization_malformed',
    message: 'Authorization header must have the form "Bearer <token>"',
  },
  AccessTokenInvalidError: {
    error: new errors.AccessTokenInvalidError(),
    status: 401,
    code: 'access_token_invalid',
    message: 'Access token is invalid or expired',
  },
  RefreshTokenInvalidError: {
    error: new errors.RefreshTokenInvalidError(),
    status: 401,
    code: 'refresh_token_invalid',
    message: 'Refresh token is invalid, expired or already used',
  },
  TokenWrongTypeError: {
    error: new errors.TokenWrongTypeError(),
    status: 401,
    code: 'token_wrong_type',
    message: 'Token is of the wrong type for this endpoint',
  },
  HttpsRequiredError: {
    error: new errors.HttpsRequiredError(),
    status: 403,
    code: 'https_required',
    message: 'HTTPS is required',
  },
  NotFoundError: { error: new errors.NotFoundError(), status: 404, code: 'not_found', message: 'Not found' },
  SessionNotFoundError: {
    error: new errors.SessionNotFoundError(),
    status: 404,
    code: 'session_not_found',
    message: 'Session not found',
  },
  MethodNotAllowedError: {
    error: new errors.MethodNotAllowedError(['GET']),
    status: 405,
    code: 'method_not_allowed',
    message: 'Method not allowed',
  },
  EmailTakenError: {
    error: new errors.EmailTakenError(),
    status: 409,
    code: 'email_taken',
    message: 'E-mail already registered',
  },
  UsernameTakenError: {
    error: new errors.UsernameTakenError(),
    status: 409,
    code: 'username_taken',
    message: 'Username already taken',
  },
  UnsupportedImageError: {
    error: new errors.UnsupportedImageError(),
    status: 415,
    code: 'unsupported_image',
    message: 'The avatar must be a JPEG, PNG or WebP image',
  },
  AvatarTooLargeError: {
    error: new errors.AvatarTooLargeError(),
    status: 413,
    code: 'avatar_too_large',
    message: 'The avatar must be at most 2 MB (2,097,152 bytes)',
  },
  AvatarImageTooLargeError: {
    error: new errors.AvatarImageTooLargeError(),
    status: 413,
    code: 'avatar_image_too_large',
    message:
      'The avatar must be at most 40 megapixels and 16,384 pixels on a side (16 megapixels if interlaced or progressive, 8 at 16 bits per channel)',
  },
  MultipartRequiredError: {
    error: new errors.MultipartRequiredError(),
    status: 415,
    code: 'multipart_required',
    message: 'Content-Type must be multipart/form-data',
  },
  ExchangeCodeRefusedError: {
    error: new errors.ExchangeCodeRefusedError(),
    status: 400,
    code: 'exchange_code_refused',
    message: 'Invalid or expired code',
  },
  ProviderNotLinkedError: {
    error: new errors.ProviderNotLinkedError(),
    status: 404,
    code: 'provider_not_linked',
    message: 'This provider is not linked to the account',
  },
  SecondFactorInvalidError: {
    error: new errors.SecondFactorInvalidError(),
    status: 401,
    code: 'second_factor_invalid',
    message: 'Second factor invalid or expired',
  },
  SecondFactorRequiredError: {
    error: new errors.SecondFactorRequiredError(),
    status: 403,
    code: 'second_factor_required',
    message: 'Second factor required',
  },
  EmailUnverifiedError: {
    error: new errors.EmailUnverifiedError(),
    status: 403,
    code: 'email_unverified',
    message: "Verify the account's e-mail address first",
  },
  FactorNotFoundError: {
    error: new errors.FactorNotFoundError(),
    status: 404,
    code: 'factor_not_found',
    message: 'Factor not found',
  },
  OnlyWayInError: {
    error: new errors.OnlyWayInError(),
    status: 409,
    code: 'only_way_in',
    message: 'This is the only way to sign in to the account',
  },
  PayloadTooLargeError: {
    error: new errors.PayloadTooLargeError(),
    status: 413,
    code: 'payload_too_large',
    message: 'Request body is too large',
  },
  UnsupportedMediaTypeError: {
    error: new errors.UnsupportedMediaTypeError(),
    status: 415,
    code: 'unsupported_media_type',
    message: 'Content-Type must be application/json',
  },
  RateLimitedError: {
    error: new errors.RateLimitedError(30),
    status: 429,
    code: 'rate_limited',
    message: 'Too many requests, retry later',
  },
  InternalError: {
    error: new errors.InternalError(),
    status: 500,
    code: 'internal_error',
    message: 'Internal server error',
  },
  ServiceBusyError: {
    error: new errors.ServiceBusyError(),
    status: 503,
    code: 'service_busy',
    message: 'Server is busy, retry shortly',
  },
  BodyNotUtf8Error: {
    error: new errors.BodyNotUtf8Error(),
    status: 400,
    code: 'body_not_utf8',
    message: 'Request body is not valid UTF-8',
  },
  WriteOutcomeUnknownError: {
    error: new errors.WriteOutcomeUnknownError(),
    status: 503,
    code: 'write_outcome_unknown',
    message: 'The change may or may not have been applied; retry',
  },
  PasskeyRefusedError: {
    error: new errors.PasskeyRefusedError(),
    status: 401,
    code: 'passkey_refused',
    message: 'Passkey not accepted',
  },
  PasskeyNotVerifiedError: {
    error: new errors.PasskeyNotVerifiedError(),
    status: 400,
    code: 'passkey_not_verified',
    message: 'Passkey could not be verified: start again',
  },
  PasskeyTakenError: {
    error: new errors.PasskeyTakenError(),
    status: 409,
    code: 'passkey_taken',
    message: 'Passkey already registered',
  },
  ForbiddenError: {
    error: new errors.ForbiddenError(),
    status: 403,
    code: 'forbidden',
    message: 'Forbidden',
  },
  UserNotFoundError: {
    error: new errors.UserNotFoundError(),
    status: 404,
    code: 'user_not_found',
    message: 'User not found',
  },
  AdminSelfError: {
    error: new errors.AdminSelfError(),
    status: 409,
    code: 'admin_self',
    message: 'An admin cannot demote, disable or delete their own account',
  },
  LastAdminError: {
    error: new errors.LastAdminError(),
    status: 409,
    code: 'last_admin',
    message: 'The last active admin cannot be demoted, disabled or deleted',
  },
}

/**
 * The errors that are not HTTP answers: their code and text. Each reaches a client, if ever, as the generic 500, and
 * the process prints its message (`tessera: <message>`, or the site-config command's lines).
 */
const INTERNAL: Record<string, { error: TesseraError; code: string; message: string }> = {
  StorageError: {
    error: new errors.StorageError('users.findByEmail failed', { cause: new Error('ECONNREFUSED') }),
    code: 'storage_failed',
    message: 'users.findByEmail failed',
  },
  DataKeyError: {
    error: new errors.DataKeyError(),
    code: 'data_key_unopened',
    message:
      "the second-factor data key (service_keys 'mfa') opens with neither AUTH_JWT_SECRET nor AUTH_JWT_PREVIOUS_SECRETS: put the secret it was sealed under back into AUTH_JWT_PREVIOUS_SECRETS",
  },
  ConfigError: {
    error: new config.ConfigError('PORT', 'must be an integer from 0 to 65535, got "abc"'),
    code: 'config_invalid',
    message: 'PORT must be an integer from 0 to 65535, got "abc"',
  },
  SiteConfigFileError: {
    error: new siteConfigErrors.SiteConfigFileError('site.json', 'cannot read the file: no such file'),
    code: 'site_config_unreadable',
    message: 'site.json: cannot read the file: no such file',
  },
  SiteConfigInvalidError: {
    error: new siteConfigErrors.SiteConfigInvalidError('site.yaml', [
      { pointer: '/toc/maxLevel', message: '/toc/maxLevel must be an integer from 1 to 6, got 7' },
    ]),
    code: 'site_config_invalid',
    message: 'site.yaml: /toc/maxLevel must be an integer from 1 to 6, got 7',
  },
  CommandUsageError: {
    error: new commandErrors.CommandUsageError('--limit takes a whole number from 1 to 1000'),
    code: 'command_usage',
    message: '--limit takes a whole number from 1 to 1000',
  },
  CommandFailedError: {
    error: new commandErrors.CommandFailedError('the two passwords differ; nothing was changed'),
    code: 'command_failed',
    message: 'the two passwords differ; nothing was changed',
  },
  OperationFailedError: {
    error: new errors.OperationFailedError('no account has the e-mail a@example.com'),
    code: 'operation_failed',
    message: 'no account has the e-mail a@example.com',
  },
  PromptCancelledError: {
    error: new commandErrors.PromptCancelledError(),
    code: 'prompt_cancelled',
    message: 'cancelled at the prompt',
  },
}

/** The modules that declare error classes. */
const MODULES = { errors, config, siteConfigErrors, commandErrors }

function declaredErrors(base: abstract new (...args: never[]) => Error): string[] {
  return Object.values(MODULES)
    .flatMap((module) => Object.entries(module))
    .filter(([, value]) => typeof value === 'function' && value.prototype instanceof base)
    .map(([name]) => name)
    .sort()
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.[cm]?[jt]s$/.test(entry.name) ? [path] : []
  })
}

describe('errors', () => {
  it('every AppError subclass is listed here with its status, code and message', () => {
    expect(declaredErrors(AppError)).toEqual(Object.keys(EXPECTED).sort())
  })

  it('every other error class is listed here with its code and message', () => {
    const internal = declaredErrors(TesseraError).filter((name) => !(name in EXPECTED))
    expect(internal.sort()).toEqual(['AppError', ...Object.keys(INTERNAL)].sort())
  })

  it('every error class of src/ derives from TesseraError and is declared in a module listed here', () => {
    const classes = sourceFiles(join(import.meta.dirname, '../src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g)].map(
        ([, name, base]) => ({
          name,
          base,
        }),
      ),
    )
    expect(classes.filter(({ base }) => base === 'Error').map(({ name }) => name)).toEqual(['TesseraError'])
    const listed = new Set(['TesseraError', 'AppError', ...Object.keys(EXPECTED), ...Object.keys(INTERNAL)])
    const unlisted = classes.filter(({ name, base }) => /Error$/.test(`${base}`) && !listed.has(`${name}`))
    expect(unlisted).toEqual([])
  })

  it('each code of ERROR_CODES belongs to exactly one error', () => {
    const codes = [...Object.values(EXPECTED), ...Object.values(INTERNAL)].map(({ error }) => error.code)
    expect([...codes].sort()).toEqual([...ERROR_CODES].sort())
  })

  it.each(Object.entries(EXPECTED))('%s', (name, { error, status, code, message }) => {
    expect(error.name).toBe(name)
    expect(error.statusCode).toBe(status)
    expect(error.code).toBe(code)
    expect(error.message).toBe(message)
  })

  it.each(Object.entries(INTERNAL))('%s', (name, { error, code, message }) => {
    expect(error).toBeInstanceOf(TesseraError)
    expect(error).not.toBeInstanceOf(AppError)
    expect(error.name).toBe(name)
    expect(error.code).toBe(code)
    expect(error.message).toBe(message)
  })

  // docs/api.md R1.19: each text from the catalogues, in every language, and in Chinese in the Chinese one
  it.each(Object.entries(EXPECTED))('%s has its text in every language', (_name, { error, message }) => {
    expect(render('en', error.text)).toBe(message)
    for (const language of languages()) {
      expect(catalogues().get(language)?.messages, language).toHaveProperty([error.text.key])
    }
    const chinese = render('zh-CN', error.text)
    expect(chinese).toMatch(/\p{Script=Han}/u)
    expect(chinese).not.toContain('{')
  })

  it('an internal cause is kept for the log, never in the message', () => {
    const error = new errors.InternalError(new Error('password=hunter2 at db:5432'))
    expect(error.message).toBe('Internal server error')
    expect((error.cause as Error).message).toContain('db:5432')
  })

  it('headers: Allow on 405, Retry-After on 429 and 503', () => {
    expect(new errors.MethodNotAllowedError(['GET', 'HEAD']).headers).toEqual({ allow: 'GET, HEAD' })
    expect(new errors.RateLimitedError(12).headers).toEqual({ 'retry-after': '12' })
    expect(new errors.ServiceBusyError().headers).toEqual({ 'retry-after': '1' })
    expect(new errors.WriteOutcomeUnknownError().headers).toEqual({ 'retry-after': '1' })
  })
})

describe('toAppError', () => {
  it('keeps AppErrors', () => {
    const error = new errors.EmailTakenError()
    expect(toAppError(error)).toBe(error)
  })

  it('turns anything unknown into a generic 500 that keeps the cause', () => {
    const thrown = new TypeError('cannot read properties of undefined')
    const mapped = toAppError(thrown)
    expect(mapped).toBeInstanceOf(errors.InternalError)
    expect(mapped.cause).toBe(thrown)
    expect(toAppError('a string')).toBeInstanceOf(errors.InternalError)
  })

  it.each(Object.entries(INTERNAL))(
    'answers a %s with the generic 500, keeping it as the cause',
    (_name, { error }) => {
      const mapped = toAppError(error)
      expect(mapped).toBeInstanceOf(errors.InternalError)
      expect(mapped.message).toBe('Internal server error')
      expect(mapped.cause).toBe(error)
    },
  )

  it('answers a write whose outcome is unknown with the 503 of its own, a failed one with the 500', () => {
    const cause = new Error('no answer within 1000 ms')
    const unknown = new errors.StorageError('sessions.rotate failed', { cause, outcomeUnknown: true })
    const mapped = toAppError(unknown)
    expect(mapped).toBeInstanceOf(errors.WriteOutcomeUnknownError)
    expect(mapped.cause).toBe(unknown)
    const failed = new errors.StorageError('sessions.rotate failed', { cause })
    expect(failed.outcomeUnknown).toBe(false)
    expect(toAppError(failed)).toBeInstanceOf(errors.InternalError)
  })

  it('maps an unknown 4xx from Fastify to its status with the standard text', () => {
    const mapped = toAppError(
      Object.assign(new Error('FST_ERR_BAD_URL: "%zz" is not a valid url'), { statusCode: 400 }),
    )
    expect(mapped.statusCode).toBe(400)
    expect(mapped.message).toBe('Bad Request')
  })
})
