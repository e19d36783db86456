import { newPasswordProblem } from '../auth/password-policy.js'
import {
  BodyNotUtf8Error,
  CodeRefusedError,
  EmailTakenError,
  InternalError,
  InvalidCredentialsError,
  MailUnavailableError,
  MalformedBodyError,
  MethodNotAllowedError,
  NotFoundError,
  PasswordIncorrectError,
  RefreshTokenInvalidError,
  ServiceBusyError,
  SessionNotFoundError,
  TokenWrongTypeError,
  UsernameTakenError,
  ValidationError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { type Message, message } from '../language/message.js'
import { NICKNAME_MAX_LENGTH, USERNAME_RULE } from '../profile/profile-rules.js'
import {
  answer,
  challenge,
  failed,
  type Headers,
  httpsRequired,
  LIMITED,
  NO_STORE,
  notJson,
  rateLimited,
  refusal,
  retryLater,
  tooLarge,
  unauthorized,
} from './response-parts.js'
import {
  AccountResponse,
  DoneResponse,
  EndSessionResponse,
  HealthResponse,
  InfoResponse,
  LoginResponse,
  LogoutResponse,
  MeResponse,
  RefreshResponse,
  RegisterResponse,
  SessionsResponse,
  SignInResponse,
  VERIFICATION_CODE_PATTERN,
} from './schemas.js'

// Every status each operation answers, as the route schemas give it to Fastify and the API document, made of the
// parts in response-parts.ts. docs/api.md section 4 says when.

/** The API document's description: what holds for every request, beyond each operation's own answers. */
export const DOCUMENT_DESCRIPTION = [
  'Account and token service: registration, login, short-lived JWT access tokens and single-use refresh tokens.',
  'Every error answer but the 503 of `GET /health` (which reports its checks) is the `ErrorResponse` envelope, ' +
    'whose `code` is the HTTP status. Beyond the statuses each operation lists, a request can be refused before ' +
    'it reaches one, in the same envelope: a path the service does not serve is 404 and a served path asked with ' +
    'another method 405 with `Allow` (`components.responses`); a malformed request is 400, headers over 16 KiB ' +
    '431, a request slower than the time limits 408 and an `Expect` other than `100-continue` 417. Every answer ' +
    'carries `X-Content-Type-Options: nosniff`, and every answer over HTTPS `Strict-Transport-Security`.',
  'The messages (`message`, `data.errors[].message`, the sign-in pages, the mails) are in English, as the examples ' +
    'show, or in Simplified Chinese when `Accept-Language` prefers `zh`, `zh-CN`, `zh-SG` or `zh-Hans`; such an ' +
    'answer carries `Content-Language` and `Vary: Accept-Language`. `Success` stays `Success`.',
  'E-mail addresses follow the WHATWG rule, stated as a `pattern` (ECMA-262), not `format: email`: ' +
    '`a.@example.com` is valid. The contract, rule by rule, is docs/api.md in the repository; this document ' +
    "describes each operation's answers.",
].join('\n\n')

const INVALID_TOKEN_CHALLENGE: Headers = {
  'WWW-Authenticate': {
    type: 'string',
    const: challenge(new RefreshTokenInvalidError()),
    description: 'The refresh token is a bearer credential, refused (R5.4)',
  },
}

const ALLOW: Headers = {
  Allow: { type: 'string', examples: ['POST', 'GET, HEAD'], description: 'The methods the path takes' },
}

/** One refusal that stands for the errors of both: `extra`'s examples added to `base`'s, `base`'s description first. */
export function withExamples(extra: ReturnType<typeof refusal>, base: ReturnType<typeof refusal>) {
  const content = (response: ReturnType<typeof refusal>) => response.content['application/json']
  return {
    ...base,
    description: `${base.description}; or: ${extra.description}`,
    content: {
      'application/json': {
        ...content(base),
        examples: { ...content(base).examples, ...content(extra).examples },
      },
    },
  }
}

export const invalid = (field: string, problem: Message) => new ValidationError([{ field, message: problem }])

export const badBody = (fieldErrors: readonly ValidationError[], headers: Headers) =>
  refusal(
    'The body is not JSON in UTF-8 or not an object, or a field is not valid: `data.errors` names it (R1.4 to R1.7)',
    [...fieldErrors, new MalformedBodyError(), new BodyNotUtf8Error()],
    headers,
  )

/**
 * The refusals that every endpoint taking a JSON body under the limits of R8.1 shares beside its own: 403 (HTTPS
 * required), 413, 415, 429 (`tooMany` says what was counted) and 500, each with the rate-limit headers.
 */
export const limitedJsonRefusals = (tooMany: string) => ({
  403: httpsRequired(),
  413: tooLarge(LIMITED),
  415: notJson(LIMITED),
  429: rateLimited(tooMany, LIMITED),
  500: failed(LIMITED),
})

/** The rule of a new password, as the policy words it. */
const NEW_PASSWORD_RULE = newPasswordProblem('') as Message

const EMAIL_ERROR = invalid('/email', message('field.email'))

/** POST /auth/register (docs/api.md §4.3). */
export const registerResponses = () => ({
  ...limitedJsonRefusals(
    'More than RATE_LIMIT_PER_MINUTE registrations from this client address in a minute (R8.1)',
  ),
  200: answer(
    RegisterResponse,
    'Account created and logged in: the normalized e-mail, the creation time and a token pair',
    LIMITED,
  ),
  400: withExamples(
    codeRefused('§4.3'),
    badBody(
      [
        EMAIL_ERROR,
        invalid('/password', NEW_PASSWORD_RULE),
        invalid('/verification_code', message('field.required')),
      ],
      LIMITED,
    ),
  ),
  409: refusal(
    'The e-mail, once normalized, is already registered (R4.3.2)',
    [new EmailTakenError()],
    LIMITED,
  ),
  503: retryLater(
    'The Argon2 queue is full (R8.2), or the account may or may not have been created (R7.3): retry',
    [new ServiceBusyError(), new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})

/** POST /auth/login (§4.4). No rate-limit headers: they would tell the count of failures (R8.4). */
export const loginResponses = () => ({
  200: answer(SignInResponse, SIGNED_IN, NO_STORE),
  400: badBody([EMAIL_ERROR, invalid('/password', message('field.not_empty'))], NO_STORE),
  401: refusal(
    'Unknown e-mail or wrong password: one answer for both (R4.4.3)',
    [new InvalidCredentialsError()],
    NO_STORE,
  ),
  403: httpsRequired(),
  413: tooLarge(NO_STORE),
  415: notJson(NO_STORE),
  429: rateLimited(
    'Too many failed logins from this client address (R8.4) or against this e-mail (R8.5); no password was checked',
    NO_STORE,
  ),
  500: refusal(
    'A store failed: answered alike for a right and a wrong password (R4.4.5)',
    [new InternalError()],
    NO_STORE,
  ),
  503: retryLater('The Argon2 queue is full (R8.2)', [new ServiceBusyError()], NO_STORE),
})

/** The 200 of every first factor (§4.25). */
export const SIGNED_IN =
  'Logged in: the account and a new token pair; for an account with a second factor, `mfa_required` and a ticket instead (§4.25)'

/** POST /auth/refresh (§4.5). */
export const refreshResponses = () => ({
  ...limitedJsonRefusals(
    'More than RATE_LIMIT_PER_MINUTE refreshes from this client address in a minute (R8.1)',
  ),
  200: answer(RefreshResponse, 'A new token pair; the refresh token sent is used up (R3.3)', LIMITED),
  400: badBody([invalid('/refresh_token', message('field.not_empty'))], LIMITED),
  401: refusal(
    'The refresh token is invalid, expired, already used or replaced, or an access token (R4.5.3)',
    [new RefreshTokenInvalidError(), new TokenWrongTypeError()],
    { ...LIMITED, ...INVALID_TOKEN_CHALLENGE },
  ),
  503: retryLater(
    'The token may or may not have been rotated (R7.3): retry, and log in again on a 401',
    [new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})

/** POST /auth/delete-refresh-token (§4.6). */
export const logoutResponses = () => ({
  200: answer(
    LogoutResponse,
    "Logged out: the caller's session is ended (R3.5), or with `scope` its other sessions or all of them",
    NO_STORE,
  ),
  400: refusal(
    'A body that is not JSON in UTF-8 (R4.6.2), or a `scope` other than current, others, all; the access token was valid',
    [new MalformedBodyError(), new BodyNotUtf8Error(), invalid('/scope', message('field.enum'))],
    NO_STORE,
  ),
  401: unauthorized(),
  403: httpsRequired(),
  413: tooLarge(NO_STORE),
  415: notJson(NO_STORE),
  500: failed(NO_STORE),
  503: retryLater(
    'The refresh token may or may not have been deleted (R7.3): retry',
    [new WriteOutcomeUnknownError()],
    NO_STORE,
  ),
})

/** GET /auth/sessions (§4.11). */
export const sessionsResponses = () => ({
  200: answer(SessionsResponse, "The caller's sessions, most recently used first", NO_STORE),
  401: unauthorized(),
  403: httpsRequired(),
  500: failed(NO_STORE),
})

/** DELETE /auth/sessions/{id} (§4.12). */
export const endSessionResponses = () => ({
  200: answer(EndSessionResponse, 'The session is ended: its refresh token is refused from now on', NO_STORE),
  401: unauthorized(),
  403: httpsRequired(),
  404: refusal("The id is not one of the caller's sessions (whether it exists or not)", [
    new SessionNotFoundError(),
  ]),
  500: failed(NO_STORE),
  503: retryLater(
    'The session may or may not have been ended (R7.3): retry',
    [new WriteOutcomeUnknownError()],
    NO_STORE,
  ),
})

const CODE_ERROR = invalid(
  '/verification_code',
  message('field.verification_code', { pattern: VERIFICATION_CODE_PATTERN }),
)
/** POST /auth/password/reset takes a reset key as well (§4.17). */
const RESET_CODE_ERROR = invalid('/verification_code', message('field.reset_code'))
const NEW_PASSWORD_ERROR = invalid('/new_password', NEW_PASSWORD_RULE)
const PER_ADDRESS = ' or more than RATE_LIMIT_PER_MINUTE requests from this client address in a minute (R8.1)'
export const codeRefused = (
  where: string,
  what = 'The code is wrong, expired, used, of another purpose, or out of its five tries',
) => refusal(`${what}: one answer for all (${where})`, [new CodeRefusedError()], LIMITED)
/** No Retry-After: no retry helps until SMTP_URL is set (R4.14.7). */
const mailUnavailable = () =>
  retryLater(
    'No mail can be sent: production without SMTP_URL, which only a change of configuration ends (R4.14.7); or the code or the mail may or may not have been stored (R7.3): retry',
    [new MailUnavailableError(), new WriteOutcomeUnknownError()],
    LIMITED,
  )
/** A write whose outcome is unknown (R7.3), with the Argon2 queue full (R8.2) where the operation hashes. */
export const mayHaveChanged = (hashes: boolean) =>
  retryLater(
    hashes
      ? 'The Argon2 queue is full (R8.2), or a write may or may not have been applied (R7.3): retry'
      : 'A write may or may not have been applied (R7.3): retry',
    hashes ? [new ServiceBusyError(), new WriteOutcomeUnknownError()] : [new WriteOutcomeUnknownError()],
    LIMITED,
  )
export const passwordIncorrect = () =>
  refusal(
    "The password is not the account's (or the account has none: set one by reset). A 400: the access token is good",
    [new PasswordIncorrectError()],
    LIMITED,
  )

/** POST /auth/email/send-code (§4.14). */
export const sendCodeResponses = () => ({
  ...limitedJsonRefusals(
    `A code was sent to this address for this purpose less than EMAIL_CODE_RESEND_SECONDS ago, or a quarter of EMAIL_CODE_HOURLY_LIMIT (rounded up) were in this quarter of an hour,${PER_ADDRESS}`,
  ),
  200: answer(
    DoneResponse,
    'The mail is committed to the outbox; the same answer whether or not the address has an account',
    LIMITED,
  ),
  400: badBody([EMAIL_ERROR, invalid('/purpose', message('field.enum'))], LIMITED),
  503: mailUnavailable(),
})

/** POST /auth/me/send-code (§4.14). */
export const sendAccountCodeResponses = () => ({
  ...sendCodeResponses(),
  200: answer(DoneResponse, 'The mail is committed to the outbox', LIMITED),
  400: badBody(
    [invalid('/purpose', message('field.enum')), invalid('/new_email', message('field.required'))],
    LIMITED,
  ),
  401: unauthorized(),
})

/** POST /auth/login/email-code (§4.16). */
export const codeLoginResponses = () => ({
  ...limitedJsonRefusals(`More than RATE_LIMIT_PER_MINUTE tries from this client address in a minute (R8.1)`),
  200: answer(SignInResponse, SIGNED_IN, LIMITED),
  400: badBody([EMAIL_ERROR, CODE_ERROR], LIMITED),
  401: refusal(
    'A wrong, expired or used code, or an address without an account: one answer, the same as a wrong password',
    [new InvalidCredentialsError()],
    LIMITED,
  ),
  503: mayHaveChanged(false),
})

/** POST /auth/password/reset (§4.17). */
export const resetPasswordResponses = () => ({
  ...limitedJsonRefusals(
    `More than RATE_LIMIT_PER_MINUTE resets from this client address in a minute (R8.1)`,
  ),
  200: answer(
    SignInResponse,
    'The new password is set, every session ended: the account and a new token pair; for an account with a second factor, its challenge and no tokens (§4.25)',
    LIMITED,
  ),
  400: withExamples(
    codeRefused(
      '§4.17',
      'The code is wrong, expired, used, of another purpose, or out of its five tries, or the reset key is wrong, expired or used',
    ),
    badBody([EMAIL_ERROR, RESET_CODE_ERROR, NEW_PASSWORD_ERROR], LIMITED),
  ),
  503: mayHaveChanged(true),
})

/** POST /auth/password/change (§4.18). */
export const changePasswordResponses = () => ({
  ...limitedJsonRefusals(`Too many wrong passwords against this account (R8.5),${PER_ADDRESS}`),
  200: answer(
    LoginResponse,
    'The new password is set, every other session ended: the account and a new token pair',
    LIMITED,
  ),
  400: withExamples(passwordIncorrect(), badBody([NEW_PASSWORD_ERROR], LIMITED)),
  401: unauthorized(),
  503: mayHaveChanged(true),
})

/** POST /auth/email/change (§4.19). */
export const changeEmailResponses = () => ({
  ...limitedJsonRefusals(
    `More than RATE_LIMIT_PER_MINUTE changes from this client address in a minute (R8.1)`,
  ),
  200: answer(AccountResponse, 'The address is changed and verified; the old one was told', LIMITED),
  400: withExamples(
    codeRefused('§4.19'),
    badBody([invalid('/new_email', message('field.email')), CODE_ERROR], LIMITED),
  ),
  401: unauthorized(),
  409: refusal('Another account has the new address', [new EmailTakenError()], LIMITED),
  503: mayHaveChanged(false),
})

/** POST /auth/email/verify (§4.20). */
export const verifyEmailResponses = () => ({
  ...limitedJsonRefusals(`More than RATE_LIMIT_PER_MINUTE tries from this client address in a minute (R8.1)`),
  200: answer(AccountResponse, 'The address is verified', LIMITED),
  400: withExamples(codeRefused('§4.20'), badBody([CODE_ERROR], LIMITED)),
  401: unauthorized(),
  503: mayHaveChanged(false),
})

/** POST /auth/delete (§4.21). */
export const deleteAccountResponses = () => ({
  ...limitedJsonRefusals(`Too many wrong passwords against this account (R8.5),${PER_ADDRESS}`),
  200: answer(DoneResponse, 'The account, its sessions, codes and queued mail are gone', LIMITED),
  400: withExamples(
    withExamples(codeRefused('§4.21'), passwordIncorrect()),
    badBody([invalid('/password', message('field.password_or_code'))], LIMITED),
  ),
  401: unauthorized(),
  503: mayHaveChanged(true),
})

/** PUT /auth/profile (§4.22). */
export const profileResponses = () => ({
  ...limitedJsonRefusals(
    `More than RATE_LIMIT_PER_MINUTE changes from this client address in a minute (R8.1)`,
  ),
  200: answer(AccountResponse, 'The profile is changed: the account as it is now', LIMITED),
  400: badBody(
    [
      invalid('/username', USERNAME_RULE),
      invalid('/nickname', message('field.nickname_length', { max: NICKNAME_MAX_LENGTH })),
    ],
    LIMITED,
  ),
  401: unauthorized(),
  409: refusal('Another account has the username', [new UsernameTakenError()], LIMITED),
  503: mayHaveChanged(false),
})

/** GET /auth/me (§4.7). */
export const meResponses = () => ({
  200: answer(MeResponse, "The caller's account", NO_STORE),
  401: unauthorized(),
  403: httpsRequired(),
  500: failed(NO_STORE),
})

/** GET /health (§4.1). */
export const healthResponses = () => ({
  200: answer(HealthResponse('ok'), 'Every dependency answered (R4.1.1)'),
  503: answer(
    HealthResponse('unavailable'),
    'A dependency did not answer within HEALTH_TIMEOUT_MS: take the instance out of rotation (R4.1.2)',
  ),
  500: failed(),
})

/** GET /info (§4.2). */
export const infoResponses = () => ({
  200: answer(InfoResponse, 'Name, version and run state of the service (R4.2.1)'),
  500: failed(),
})

/** The 500 of an endpoint whose own answer is described elsewhere (GET /site-config, §4.8). */
export const unforeseenFailure = () => failed()

/**
 * The answers to a request that matches no operation (R1.10), as OpenAPI response objects for the document's
 * `components.responses`: no operation answers them, so no route schema can carry them.
 */
export function unmatchedRequestResponses() {
  const openApi = (response: ReturnType<typeof refusal>) => ({
    description: response.description,
    ...('headers' in response
      ? {
          headers: Object.fromEntries(
            Object.entries(response.headers ?? {}).map(([name, { description, ...schema }]) => [
              name,
              { description, schema },
            ]),
          ),
        }
      : {}),
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorResponse' },
        examples: response.content['application/json'].examples,
      },
    },
  })
  return {
    NotFound: openApi(refusal('The path is not one the service serves (R1.10)', [new NotFoundError()])),
    MethodNotAllowed: openApi(
      refusal(
        'The path is served, but not with this method: `Allow` lists the methods it takes (R1.10, R1.14)',
        [new MethodNotAllowedError(['POST'])],
        ALLOW,
      ),
    ),
  }
}
