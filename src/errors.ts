import { english } from './language/catalogues.js'
import { type Message, message } from './language/message.js'

/**
 * Every error code of the service, declared once. Each error class carries one as `code`: a stable string for logs,
 * tests and the site-config command, never shown to an HTTP client (the envelope carries the status and message).
 */
export const ERROR_CODES = [
  // HTTP answers (AppError)
  'validation_failed',
  'malformed_body',
  'bad_request',
  'invalid_credentials',
  'authorization_missing',
  'authorization_malformed',
  'access_token_invalid',
  'refresh_token_invalid',
  'token_wrong_type',
  'not_found',
  'session_not_found',
  'code_refused',
  'password_incorrect',
  'mail_unavailable',
  'method_not_allowed',
  'email_taken',
  'username_taken',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal_error',
  'service_busy',
  'https_required',
  'body_not_utf8',
  'write_outcome_unknown',
  'unsupported_image',
  'avatar_too_large',
  'avatar_image_too_large',
  'multipart_required',
  'exchange_code_refused',
  'provider_not_linked',
  'only_way_in',
  'second_factor_invalid',
  'second_factor_required',
  'email_unverified',
  'factor_not_found',
  'passkey_refused',
  'passkey_not_verified',
  'passkey_taken',
  'forbidden',
  'user_not_found',
  'admin_self',
  'last_admin',
  // failures inside the process, never an HTTP answer of their own
  'storage_failed',
  'data_key_unopened',
  'config_invalid',
  'site_config_unreadable',
  'site_config_invalid',
  'operation_failed',
  // the operator commands (src/commands/command-errors.ts)
  'command_usage',
  'command_failed',
  'prompt_cancelled',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

/** The base of every error class of the service: a message, a stable `code`, and an optional internal `cause`. */
export abstract class TesseraError extends Error {
  abstract readonly code: ErrorCode

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
  }
}

/**
 * Every error the service answers with, declared once. Each subclass fixes its status, a stable `code` for logs and
 * a public message, `text`: a key of the message catalogues (messages/), written in the client's language when it is
 * sent (docs/api.md §1.5), and in English as the error's `message` for logs. `cause` carries internal detail that
 * is logged and never sent.
 */
export abstract class AppError extends TesseraError {
  abstract readonly statusCode: number
  /** The public message, to be written in the client's language. */
  readonly text: Message
  /** Extra response headers (Allow, Retry-After). */
  readonly headers: Readonly<Record<string, string>> = {}

  constructor(text: Message, options?: { cause?: unknown }) {
    super(english(text), options)
    this.text = text
  }

  /** What the envelope's `data` holds: null but for a validation error, whose field problems are written in `write`. */
  envelopeData(_write: (text: Message) => string): unknown {
    return null
  }
}

export interface FieldError {
  /** JSON Pointer of the offending value in the request body, e.g. `/email`. */
  field: string
  /** What is wrong with it (`is required`), to be written in the client's language. */
  message: Message
}

export class ValidationError extends AppError {
  readonly statusCode = 400
  readonly code = 'validation_failed'
  readonly errors: readonly FieldError[]

  constructor(errors: FieldError[]) {
    const first = errors[0]
    super(
      first
        ? message('error.validation_failed', {
            field: first.field || message('field.body'),
            problem: first.message,
          })
        : message('error.validation_failed_plain'),
    )
    this.errors = errors
  }

  override envelopeData(write: (text: Message) => string): {
    errors: Array<{ field: string; message: string }>
  } {
    return { errors: this.errors.map(({ field, message }) => ({ field, message: write(message) })) }
  }
}

export class MalformedBodyError extends AppError {
  readonly statusCode = 400
  readonly code = 'malformed_body'
  constructor(cause?: unknown) {
    super(message('error.malformed_body'), { cause })
  }
}

export class InvalidCredentialsError extends AppError {
  readonly statusCode = 401
  readonly code = 'invalid_credentials'
  constructor() {
    // spec 4.4 rule 1: one text for a wrong e-mail and a wrong password
    super(message('error.invalid_credentials'))
  }
}

/**
 * docs/api.md R5.4: the challenge of a 401 about a bearer token (RFC 6750 §3). A request without usable credentials
 * (no header, another scheme, a malformed one) gets the bare challenge, with no error attribute (RFC 6750 §3.1); a
 * token that was presented and refused gets `error="invalid_token"`.
 */
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer' } as const
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer error="invalid_token"' } as const

export class AuthorizationMissingError extends AppError {
  readonly statusCode = 401
  readonly code = 'authorization_missing'
  override readonly headers: Readonly<Record<string, string>> = BEARER_CHALLENGE
  constructor() {
    super(message('error.authorization_missing'))
  }
}

export class AuthorizationMalformedError extends AppError {
  readonly statusCode = 401
  readonly code = 'authorization_malformed'
  override readonly headers: Readonly<Record<string, string>> = BEARER_CHALLENGE
  constructor() {
    super(message('error.authorization_malformed'))
  }
}

export class AccessTokenInvalidError extends AppError {
  readonly statusCode = 401
  readonly code = 'access_token_invalid'
  override readonly headers: Readonly<Record<string, string>> = INVALID_TOKEN_CHALLENGE
  constructor(cause?: unknown) {
    super(message('error.access_token_invalid'), { cause })
  }
}

export class RefreshTokenInvalidError extends AppError {
  readonly statusCode = 401
  readonly code = 'refresh_token_invalid'
  // docs/api.md R5.4: a refresh token is a bearer credential too, only sent in the body instead of the header
  override readonly headers: Readonly<Record<string, string>> = INVALID_TOKEN_CHALLENGE
  constructor(cause?: unknown) {
    super(message('error.refresh_token_invalid'), { cause })
  }
}

export class TokenWrongTypeError extends AppError {
  readonly statusCode = 401
  readonly code = 'token_wrong_type'
  override readonly headers: Readonly<Record<string, string>> = INVALID_TOKEN_CHALLENGE
  constructor() {
    super(message('error.token_wrong_type'))
  }
}

/** docs/api.md R5.7.2: behind a proxy (TRUST_PROXY) in production, a request with credentials came over plain HTTP. */
export class HttpsRequiredError extends AppError {
  readonly statusCode = 403
  readonly code = 'https_required'
  constructor() {
    super(message('error.https_required'))
  }
}

export class NotFoundError extends AppError {
  readonly statusCode = 404
  readonly code = 'not_found'
  constructor() {
    super(message('error.not_found'))
  }
}

/** DELETE /auth/sessions/<id> of an id that is not one of the caller's sessions (docs/api.md §4.12). */
export class SessionNotFoundError extends AppError {
  readonly statusCode = 404
  readonly code = 'session_not_found'
  constructor() {
    super(message('error.session_not_found'))
  }
}

/**
 * docs/api.md §4.14: a one-time code that is wrong, expired, used, of another purpose or out of tries, at
 * registration, reset, e-mail change, verification and deletion: one answer for all of them. (Sign-in by code
 * answers InvalidCredentialsError instead, the same as a wrong password.)
 */
export class CodeRefusedError extends AppError {
  readonly statusCode = 400
  readonly code = 'code_refused'
  constructor() {
    super(message('error.code_refused'))
  }
}

/**
 * docs/api.md §4.17, §4.20: the password given to confirm a change or a deletion is not the account's (or the account
 * has no usable password). A 400, not a 401: the access token is good, and a client must not take it for a lost
 * session.
 */
export class PasswordIncorrectError extends AppError {
  readonly statusCode = 400
  readonly code = 'password_incorrect'
  constructor() {
    super(message('error.password_incorrect'))
  }
}

/**
 * docs/api.md §6.4: production without SMTP_URL can send no mail: what needs a mail answers this. Its Retry-After
 * is an hour, as every 503 has one: only an operator's change of configuration ends it.
 */
export class MailUnavailableError extends AppError {
  readonly statusCode = 503
  readonly code = 'mail_unavailable'
  override readonly headers: Readonly<Record<string, string>> = { 'retry-after': '3600' }
  constructor() {
    super(message('error.mail_unavailable'))
  }
}

export class MethodNotAllowedError extends AppError {
  readonly statusCode = 405
  readonly code = 'method_not_allowed'
  override readonly headers: Readonly<Record<string, string>>
  constructor(allowed: readonly string[]) {
    super(message('error.method_not_allowed'))
    this.headers = { allow: allowed.join(', ') }
  }
}

/**
 * docs/api.md §4.24: POST /auth/oauth/exchange with a code that is wrong, used, expired, or whose account can no
 * longer sign in: one answer for all.
 */
export class ExchangeCodeRefusedError extends AppError {
  readonly statusCode = 400
  readonly code = 'exchange_code_refused'
  constructor() {
    super(message('error.exchange_code_refused'))
  }
}

/** docs/api.md §4.24: DELETE /auth/oauth/<provider> of a provider the caller's account is not linked to. */
export class ProviderNotLinkedError extends AppError {
  readonly statusCode = 404
  readonly code = 'provider_not_linked'
  constructor() {
    super(message('error.provider_not_linked'))
  }
}

/**
 * docs/api.md §4.24: DELETE /auth/oauth/<provider> of the account's only way in (no password, no other provider):
 * the account would be left with none.
 */
export class OnlyWayInError extends AppError {
  readonly statusCode = 409
  readonly code = 'only_way_in'
  constructor() {
    super(message('error.only_way_in'))
  }
}

/**
 * docs/api.md §4.25: POST /auth/mfa/verify refused: a wrong code or recovery code, a ticket that is unknown, used,
 * expired or out of tries, an account that can no longer sign in. One answer for all, like a wrong password's.
 */
export class SecondFactorInvalidError extends AppError {
  readonly statusCode = 401
  readonly code = 'second_factor_invalid'
  constructor() {
    super(message('error.second_factor_invalid'))
  }
}

/**
 * docs/api.md §4.25: what needs a session established with the second factor (removing a factor, new recovery
 * codes) asked by one that was not. A 403: the access token is good, and a client must not take it for a lost session.
 */
export class SecondFactorRequiredError extends AppError {
  readonly statusCode = 403
  readonly code = 'second_factor_required'
  constructor() {
    super(message('error.second_factor_required'))
  }
}

/** docs/api.md §4.25: a factor is added only to an account whose address is verified. */
export class EmailUnverifiedError extends AppError {
  readonly statusCode = 403
  readonly code = 'email_unverified'
  constructor() {
    super(message('error.email_unverified'))
  }
}

/** docs/api.md §4.25: a factor id that is not one of the caller's factors, whether it exists or not. */
export class FactorNotFoundError extends AppError {
  readonly statusCode = 404
  readonly code = 'factor_not_found'
  constructor() {
    super(message('error.factor_not_found'))
  }
}

/**
 * docs/api.md §4.26: POST /auth/passkeys/login/verify refused: a ticket unknown, used or expired, a passkey no account
 * has, an assertion for another origin or relying party, of another challenge, without user verification where it is
 * required, with a bad signature or a counter that went backwards, a passkey not of the challenge's account, an
 * account that can no longer sign in. One answer for all, like a wrong password's.
 */
export class PasskeyRefusedError extends AppError {
  readonly statusCode = 401
  readonly code = 'passkey_refused'
  constructor() {
    super(message('error.passkey_refused'))
  }
}

/**
 * docs/api.md §4.26: POST /auth/passkeys/register/verify refused: the ticket is unknown, used, expired or another
 * account's, or the credential does not verify (another origin or relying party, another challenge, no user presence,
 * an algorithm not offered, a key too large to keep). A 400: the access token is good, and the ceremony starts again.
 */
export class PasskeyNotVerifiedError extends AppError {
  readonly statusCode = 400
  readonly code = 'passkey_not_verified'
  constructor() {
    super(message('error.passkey_not_verified'))
  }
}

/** docs/api.md §4.26: the credential is registered already (to this account or another). */
export class PasskeyTakenError extends AppError {
  readonly statusCode = 409
  readonly code = 'passkey_taken'
  constructor() {
    super(message('error.passkey_taken'))
  }
}

/**
 * docs/api.md R4.27.2: an admin endpoint asked with the token of an account whose stored role is not ADMIN_ROLE. A 403:
 * the access token is good, and a client must not take it for a lost session.
 */
export class ForbiddenError extends AppError {
  readonly statusCode = 403
  readonly code = 'forbidden'
  constructor() {
    super(message('error.forbidden'))
  }
}

/** docs/api.md §4.27: an admin endpoint named a user id that no account has (or no longer has). */
export class UserNotFoundError extends AppError {
  readonly statusCode = 404
  readonly code = 'user_not_found'
  constructor() {
    super(message('error.user_not_found'))
  }
}

/** docs/api.md R4.27.6: an admin asked to demote, disable or delete their own account. */
export class AdminSelfError extends AppError {
  readonly statusCode = 409
  readonly code = 'admin_self'
  constructor() {
    super(message('error.admin_self'))
  }
}

/** docs/api.md R4.27.7: the change would leave no active account with ADMIN_ROLE. */
export class LastAdminError extends AppError {
  readonly statusCode = 409
  readonly code = 'last_admin'
  constructor() {
    super(message('error.last_admin'))
  }
}

export class EmailTakenError extends AppError {
  readonly statusCode = 409
  readonly code = 'email_taken'
  constructor() {
    super(message('error.email_taken'))
  }
}

/** PUT /auth/profile: another account has the username (docs/api.md §4.22). */
export class UsernameTakenError extends AppError {
  readonly statusCode = 409
  readonly code = 'username_taken'
  constructor() {
    super(message('error.username_taken'))
  }
}

export class PayloadTooLargeError extends AppError {
  readonly statusCode = 413
  readonly code = 'payload_too_large'
  constructor() {
    super(message('error.payload_too_large'))
  }
}

export class UnsupportedMediaTypeError extends AppError {
  readonly statusCode = 415
  readonly code = 'unsupported_media_type'
  constructor() {
    super(message('error.unsupported_media_type'))
  }
}

/**
 * docs/api.md §4.23: an avatar whose bytes are not a JPEG, PNG or WebP image (read from the bytes, never from the
 * file's name or declared type), or that says it is one and does not decode: one answer for both.
 */
export class UnsupportedImageError extends AppError {
  readonly statusCode = 415
  readonly code = 'unsupported_image'
  constructor(cause?: unknown) {
    super(message('error.unsupported_image'), { cause })
  }
}

/** docs/api.md §4.23: the one route that takes more than 16 KiB takes a file of at most 2 MB (2,097,152 bytes). */
export class AvatarTooLargeError extends AppError {
  readonly statusCode = 413
  readonly code = 'avatar_too_large'
  constructor() {
    super(message('error.avatar_too_large'))
  }
}

/**
 * docs/api.md R4.23.2: an avatar whose header declares more than the decoder is asked for (its memory, R4.23.6):
 * refused from the header, before anything is decoded.
 */
export class AvatarImageTooLargeError extends AppError {
  readonly statusCode = 413
  readonly code = 'avatar_image_too_large'
  constructor(cause?: unknown) {
    super(message('error.avatar_image_too_large'), { cause })
  }
}

/** docs/api.md §4.23: POST /auth/avatar takes a form (`multipart/form-data`), where every other route takes JSON. */
export class MultipartRequiredError extends AppError {
  readonly statusCode = 415
  readonly code = 'multipart_required'
  constructor() {
    super(message('error.multipart_required'))
  }
}

export class RateLimitedError extends AppError {
  readonly statusCode = 429
  readonly code = 'rate_limited'
  override readonly headers: Readonly<Record<string, string>>
  constructor(retryAfterSeconds: number) {
    super(message('error.rate_limited'))
    this.headers = { 'retry-after': String(retryAfterSeconds) }
  }
}

/**
 * A 4xx that none of the specific errors describes (bad URL encoding, bad Content-Length): the HTTP status text
 * (Node's reason phrase, in the catalogues as `status.<code>`).
 */
export class BadRequestError extends AppError {
  readonly statusCode: number
  readonly code = 'bad_request'
  constructor(statusCode: number, cause?: unknown) {
    super(statusText(statusCode), { cause })
    this.statusCode = statusCode
  }
}

/** The reason phrase of a client error: `status.<code>`, or a generic text for a status without one. */
function statusText(statusCode: number): Message {
  return STATUS_TEXTS.has(statusCode) ? message(`status.${statusCode}`) : message('error.bad_request')
}

/** The client errors whose reason phrase the catalogues hold: every 4xx of Node's STATUS_CODES. */
export const STATUS_TEXTS: ReadonlySet<number> = new Set([
  400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422,
  423, 424, 425, 426, 428, 429, 431, 451,
])

export class InternalError extends AppError {
  readonly statusCode = 500
  readonly code = 'internal_error'
  constructor(cause?: unknown) {
    super(message('error.internal_error'), { cause })
  }
}

export class ServiceBusyError extends AppError {
  readonly statusCode = 503
  readonly code = 'service_busy'
  override readonly headers: Readonly<Record<string, string>> = { 'retry-after': '1' }
  constructor() {
    super(message('error.service_busy'))
  }
}

/** docs/api.md R1.4: JSON is UTF-8 (RFC 8259 §8.1); other bytes are refused rather than decoded as U+FFFD. */
export class BodyNotUtf8Error extends AppError {
  readonly statusCode = 400
  readonly code = 'body_not_utf8'
  constructor() {
    super(message('error.body_not_utf8'))
  }
}

/**
 * docs/api.md R7.3: a write whose outcome the service cannot know (it was sent, and no answer came within
 * STORAGE_TIMEOUT_MS or the connection was lost before one did). A 500 means the change was not made; this one
 * means it may have been.
 */
export class WriteOutcomeUnknownError extends AppError {
  readonly statusCode = 503
  readonly code = 'write_outcome_unknown'
  override readonly headers: Readonly<Record<string, string>> = { 'retry-after': '1' }
  constructor(cause?: unknown) {
    super(message('error.write_outcome_unknown'), { cause })
  }
}

/**
 * Thrown by a storage backend when its server cannot be reached or fails; answered as a 500, which means the
 * operation did not take effect, or with `outcomeUnknown` (a write that may have) as a WriteOutcomeUnknownError.
 */
export class StorageError extends TesseraError {
  readonly code = 'storage_failed'
  /** True for a write that was sent and may have been applied: the client must be told it may have been. */
  readonly outcomeUnknown: boolean

  constructor(message: string, options?: { cause?: unknown; outcomeUnknown?: boolean }) {
    super(message, options)
    this.outcomeUnknown = options?.outcomeUnknown ?? false
  }
}

/**
 * docs/api.md R4.25.4: the second-factor data key in the store opens with neither AUTH_JWT_SECRET nor
 * AUTH_JWT_PREVIOUS_SECRETS (a previous secret removed before every instance had started once with the new one).
 * Every second step fails with a 500 until the secret it was sealed under is configured again: factors are never
 * silently dropped.
 */
export class DataKeyError extends TesseraError {
  readonly code = 'data_key_unopened'
  constructor() {
    super(
      "the second-factor data key (service_keys 'mfa') opens with neither AUTH_JWT_SECRET nor AUTH_JWT_PREVIOUS_SECRETS: put the secret it was sealed under back into AUTH_JWT_PREVIOUS_SECRETS",
    )
  }
}

/**
 * A refusal of an operation that its caller may explain in its own terms, such as the option that overrides it:
 * a copy into a store that holds accounts already, a backup onto a file that exists.
 */
export type OperationRefusal = 'target_not_empty' | 'destination_exists'

/**
 * An operation an operator asked of the service's layers (administering an account, copying or backing up a store)
 * that could not be done. The message says what was done and what was not; `refusal` names a refusal the caller
 * may explain further.
 */
export class OperationFailedError extends TesseraError {
  readonly code = 'operation_failed'
  readonly refusal: OperationRefusal | null

  constructor(message: string, options?: { cause?: unknown; refusal?: OperationRefusal }) {
    super(message, options)
    this.refusal = options?.refusal ?? null
  }
}

/** A file-system failure as a short reason: its errno code (`ENOENT`, `EACCES`), else its message. */
export function describeFileError(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message
}

/** A failure's message and its cause's, on one line (a StorageError names the operation, its cause the reason). */
export function describeCause(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  while (current instanceof Error && parts.length < 3) {
    // a connection refused on every address of a host: the first address's error says it
    if (current instanceof AggregateError && current.message === '' && current.errors.length > 0) {
      current = current.errors[0]
      continue
    }
    if (current.message !== '') parts.push(current.message)
    current = current.cause
  }
  if (parts.length === 0) parts.push(String(error))
  return parts.join(': ').replace(/\s+/g, ' ')
}
