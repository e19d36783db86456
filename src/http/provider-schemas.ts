import { type Static, type TSchema, Type } from 'typebox'
import { PROVIDER_NAME } from '../config/provider-config.js'
import {
  AccessTokenInvalidError,
  type AppError,
  AuthorizationMalformedError,
  AuthorizationMissingError,
  BodyNotUtf8Error,
  ExchangeCodeRefusedError,
  HttpsRequiredError,
  InternalError,
  MalformedBodyError,
  OnlyWayInError,
  PayloadTooLargeError,
  ProviderNotLinkedError,
  RateLimitedError,
  TokenWrongTypeError,
  UnsupportedMediaTypeError,
  ValidationError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { CALLBACK_PAGE_POLICY } from '../providers/callback-page.js'
import { SIGN_IN_TTL_SECONDS } from '../providers/sign-in-state.js'
import { failure } from './envelope.js'
import { AccountResponse, LoginResponse } from './schemas.js'

// The requests and answers of docs/api.md §4.24, in the form of responses.ts: a success is its schema with
// `x-response-description`, an error the shared ErrorResponse with examples made from the service's own errors. The
// start and the callback are browser navigations: they answer redirects and small HTML pages (DECISIONS "Beyond the
// specification"), and only a rate limit or an unforeseen failure with the envelope.

/** The name of the state cookie, which ties a sign-in to the browser that started it. */
export const STATE_COOKIE = 'tessera_oauth'

export const ProviderPageParams = Type.Object({
  provider: Type.String({
    description:
      'A name of OAUTH_PROVIDERS (`google`, `github`, …); any other name gets a page that reports the failure',
    examples: ['google'],
  }),
})
export type ProviderPageParams = Static<typeof ProviderPageParams>

export const ProviderParams = Type.Object({
  provider: Type.String({
    pattern: PROVIDER_NAME.source,
    description: 'The name of a linked provider (`providers` of the account)',
    examples: ['github'],
  }),
})
export type ProviderParams = Static<typeof ProviderParams>

export const StartQuery = Type.Object({
  redirect_to: Type.Optional(
    Type.String({
      description:
        'For an application that does not use a popup: an absolute URL of FRONTEND_ORIGIN, where the browser returns with `code` (or `error`); any other is a 400 page',
      examples: ['https://app.example.com/signed-in'],
    }),
  ),
})
export type StartQuery = Static<typeof StartQuery>

export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ description: "The provider's authorization code" })),
  state: Type.Optional(
    Type.String({ description: "The state the start sent, which the browser's cookie must carry" }),
  ),
  error: Type.Optional(
    Type.String({ description: "The provider's error code (`access_denied` when declined)" }),
  ),
  error_description: Type.Optional(
    Type.String({
      description: "The provider's text: logged nowhere and shown nowhere, never put in the page",
    }),
  ),
  iss: Type.Optional(
    Type.String({ description: "The provider's issuer (RFC 9207), checked when it sends one" }),
  ),
})
export type CallbackQuery = Static<typeof CallbackQuery>

export const ExchangeBody = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'The one-time `code` that the callback added to `redirect_to`; good once, for 60 seconds',
  }),
})
export type ExchangeBody = Static<typeof ExchangeBody>

export const ProvidersResponse = Type.Object({
  code: Type.Unsafe<200>({ type: 'integer', const: 200 }),
  message: Type.Literal('Success'),
  data: Type.Object({
    providers: Type.Array(Type.String(), {
      description: 'The names of OAUTH_PROVIDERS, in its order: the buttons to show',
      examples: [['google', 'github']],
    }),
  }),
})

/** Response headers by name, each a JSON Schema with its description (@fastify/swagger's form). */
type Headers = Readonly<Record<string, { description: string; [keyword: string]: unknown }>>

const NO_STORE: Headers = {
  'Cache-Control': { type: 'string', const: 'no-store', description: 'Kept by no cache (R1.12)' },
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
const PAGE: Headers = {
  ...LIMITED,
  'Content-Security-Policy': {
    type: 'string',
    const: CALLBACK_PAGE_POLICY,
    description: "Nothing runs but the page's one constant script, allowed by its hash",
  },
  'Referrer-Policy': { type: 'string', const: 'no-referrer', description: 'The page sends no referrer on' },
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

function exampleName(error: AppError): string {
  if (!(error instanceof ValidationError)) return error.code
  return `${error.code}${error.data.errors[0]?.field.replaceAll('/', '_') ?? ''}`
}

/** A callback page (callback-page.ts): HTML that posts the result to its opener and closes itself. */
const page = (description: string) => ({
  description,
  headers: PAGE,
  content: {
    'text/html': {
      schema: {
        type: 'string',
        description:
          'A page whose JSON block `result` holds `{targetOrigin, message}`, `message` being `{type: "auth:oauth:result", success, provider, message, data}`',
      },
    },
  },
})
const redirect = (description: string, extra: Headers = {}) => ({
  type: 'null',
  description,
  headers: {
    ...LIMITED,
    Location: { type: 'string', format: 'uri', description: 'Where the browser goes next' },
    ...extra,
  },
})
const rateLimited = () =>
  refusal(
    'More than RATE_LIMIT_PER_MINUTE requests of this kind from this client address in a minute (R8.1)',
    [new RateLimitedError(60)],
    { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' }, ...LIMITED },
  )
const httpsRequired = () =>
  refusal(
    'In production behind TRUST_PROXY, the request did not arrive over HTTPS; nothing was read or changed (R5.7.2)',
    [new HttpsRequiredError()],
    NO_STORE,
  )
const failed = (headers: Headers) =>
  refusal(
    'A failure the service did not foresee, such as a store that does not answer (R7.1, R7.2)',
    [new InternalError()],
    headers,
  )

/** GET /auth/oauth/providers. */
export const providersResponses = () => ({
  200: answer(ProvidersResponse, 'The configured providers', NO_STORE),
  403: httpsRequired(),
  500: failed(NO_STORE),
})

/** GET /auth/oauth/{provider}/start. */
export const startResponses = () => ({
  302: redirect('To the provider, to sign in there; the state cookie is set', {
    'Set-Cookie': {
      type: 'string',
      description: `${STATE_COOKIE}=<state>: HttpOnly, SameSite=Lax, Secure over HTTPS, Path <BASE_PATH>/auth/oauth/, Max-Age ${SIGN_IN_TTL_SECONDS}`,
    },
  }),
  400: page('`redirect_to` is not an address of FRONTEND_ORIGIN: a page that reports the failure'),
  403: httpsRequired(),
  404: page('No provider of this name is configured: a page that reports the failure to the opener at once'),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal(
    "The sign-in's state may or may not have been stored or used up (R7.3): start the sign-in again",
    [new WriteOutcomeUnknownError()],
    { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' }, ...LIMITED },
  ),
  502: page(
    "The provider's configuration could not be fetched (OpenID discovery): a page that reports the failure",
  ),
})

/** GET /auth/oauth/{provider}/callback. */
export const callbackResponses = () => ({
  200: page(
    'The result, posted to the opener at FRONTEND_ORIGIN: a login answer (account and tokens) or a failure with a fixed text',
  ),
  302: redirect(
    'With `redirect_to` at the start: back to it with `code=<one-time code>` (for POST /auth/oauth/exchange), or `error=<reason>`; the state cookie is cleared',
  ),
  403: httpsRequired(),
  404: page('No provider of this name is configured: a page that reports the failure'),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal(
    "The sign-in's state may or may not have been stored or used up (R7.3): start the sign-in again",
    [new WriteOutcomeUnknownError()],
    { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' }, ...LIMITED },
  ),
})

/** POST /auth/oauth/exchange. */
export const exchangeResponses = () => ({
  200: answer(LoginResponse, 'Logged in: the account the sign-in found and a new token pair', LIMITED),
  400: refusal(
    'The code is wrong, used, expired, or its account can no longer sign in; or the body is not valid',
    [
      new ExchangeCodeRefusedError(),
      new ValidationError([{ field: '/code', message: 'must NOT have fewer than 1 characters' }]),
      new MalformedBodyError(),
      new BodyNotUtf8Error(),
    ],
    LIMITED,
  ),
  403: httpsRequired(),
  413: refusal('The body is over 16 KiB (R1.9)', [new PayloadTooLargeError()], LIMITED),
  415: refusal(
    'A body of a type other than application/json (R1.3)',
    [new UnsupportedMediaTypeError()],
    LIMITED,
  ),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal(
    'The session may or may not have been stored (R7.3): the code is used up; sign in again',
    [new WriteOutcomeUnknownError()],
    { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' }, ...LIMITED },
  ),
})

/** DELETE /auth/oauth/{provider}. */
export const unlinkResponses = () => ({
  200: answer(AccountResponse, 'Unlinked: the account as it is now, without the provider', LIMITED),
  400: refusal(
    'The provider name is not a valid name',
    [new ValidationError([{ field: '/provider', message: `must match pattern "${PROVIDER_NAME.source}"` }])],
    LIMITED,
  ),
  401: refusal(
    'The access token is missing, not in the Bearer form, invalid or expired, or a refresh token (R5.2), or its account is gone (R4.7.2)',
    [
      new AuthorizationMissingError(),
      new AuthorizationMalformedError(),
      new AccessTokenInvalidError(),
      new TokenWrongTypeError(),
    ],
    { ...NO_STORE, ...BEARER_CHALLENGE },
  ),
  403: httpsRequired(),
  404: refusal('The account is not linked to this provider', [new ProviderNotLinkedError()], LIMITED),
  409: refusal(
    'The provider is the only way to sign in to the account (no password, no other provider): set a password first',
    [new OnlyWayInError()],
    LIMITED,
  ),
  429: rateLimited(),
  500: failed(LIMITED),
  503: refusal('The link may or may not have been removed (R7.3): retry', [new WriteOutcomeUnknownError()], {
    'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait' },
    ...LIMITED,
  }),
})
