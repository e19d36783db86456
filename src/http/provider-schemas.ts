import { type Static, Type } from 'typebox'
import { PROVIDER_NAME } from '../config/provider-config.js'
import {
  BodyNotUtf8Error,
  ExchangeCodeRefusedError,
  MalformedBodyError,
  OnlyWayInError,
  ProviderNotLinkedError,
  ValidationError,
  WriteOutcomeUnknownError,
} from '../errors.js'
import { message } from '../language/message.js'
import { CALLBACK_PAGE_POLICY } from '../providers/callback-page.js'
import { CODE_CHALLENGE } from '../providers/sign-in-flow.js'
import { SIGN_IN_TTL_SECONDS } from '../providers/sign-in-state.js'
import {
  answer,
  failed,
  type Headers,
  httpsRequired,
  LIMITED,
  NO_STORE,
  notJson,
  refusal,
  retryLater,
  rateLimited as sharedRateLimited,
  tooLarge,
  unauthorized,
} from './response-parts.js'
import { AccountResponse, SignInResponse } from './schemas.js'

// The requests and answers of docs/api.md §4.24, made of the parts in response-parts.ts. The
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
        'For an application that does not use a popup: an absolute URL of FRONTEND_ORIGIN, where the browser returns with `code` (or `error`); any other is a 400 page. Requires `code_challenge`',
      examples: ['https://app.example.com/signed-in'],
    }),
  ),
  code_challenge: Type.Optional(
    Type.String({
      pattern: CODE_CHALLENGE.source,
      description:
        "Required with `redirect_to` (a 400 page without it), not used without it: RFC 7636's S256 challenge, BASE64URL(SHA-256(code_verifier)) without padding, of a verifier (43 to 128 characters of `A-Z a-z 0-9 - . _ ~`) that the application keeps and sends to POST /auth/oauth/exchange with the code",
      examples: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'],
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
  code_verifier: Type.Optional(
    Type.String({
      description:
        "The PKCE verifier (RFC 7636) whose S256 challenge the sign-in's start was given as `code_challenge`: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`. Missing or wrong, the exchange is refused as a wrong code is, and the code is used up",
      examples: ['dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'],
    }),
  ),
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

const PAGE: Headers = {
  ...LIMITED,
  'Content-Security-Policy': {
    type: 'string',
    const: CALLBACK_PAGE_POLICY,
    description: "Nothing runs but the page's one constant script, allowed by its hash",
  },
  'Referrer-Policy': { type: 'string', const: 'no-referrer', description: 'The page sends no referrer on' },
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
  sharedRateLimited(
    'More than RATE_LIMIT_PER_MINUTE requests of this kind from this client address in a minute (R8.1)',
    LIMITED,
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
  400: page(
    '`redirect_to` is not an address of FRONTEND_ORIGIN, or comes without a `code_challenge` of its form: a page that reports the failure',
  ),
  403: httpsRequired(),
  404: page('No provider of this name is configured: a page that reports the failure to the opener at once'),
  429: rateLimited(),
  500: failed(LIMITED),
  503: retryLater(
    "The sign-in's state may or may not have been stored or used up (R7.3): start the sign-in again",
    [new WriteOutcomeUnknownError()],
    LIMITED,
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
  503: retryLater(
    "The sign-in's state may or may not have been stored or used up (R7.3): start the sign-in again",
    [new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})

/** POST /auth/oauth/exchange. */
export const exchangeResponses = () => ({
  200: answer(
    SignInResponse,
    'Logged in: the account the sign-in found and a new token pair; for an account with a second factor, its challenge instead (§4.25)',
    LIMITED,
  ),
  400: refusal(
    'The code is wrong, used, expired, or its account can no longer sign in; the verifier is missing or wrong; or the body is not valid',
    [
      new ExchangeCodeRefusedError(),
      new ValidationError([{ field: '/code', message: message('field.not_empty') }]),
      new MalformedBodyError(),
      new BodyNotUtf8Error(),
    ],
    LIMITED,
  ),
  403: httpsRequired(),
  413: tooLarge(LIMITED),
  415: notJson(LIMITED),
  429: rateLimited(),
  500: failed(LIMITED),
  503: retryLater(
    'The session may or may not have been stored (R7.3): the code is used up; sign in again',
    [new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})

/** DELETE /auth/oauth/{provider}. */
export const unlinkResponses = () => ({
  200: answer(AccountResponse, 'Unlinked: the account as it is now, without the provider', LIMITED),
  400: refusal(
    'The provider name is not a valid name',
    [
      new ValidationError([
        { field: '/provider', message: message('field.pattern', { pattern: PROVIDER_NAME.source }) },
      ]),
    ],
    LIMITED,
  ),
  401: unauthorized(),
  403: httpsRequired(),
  404: refusal('The account is not linked to this provider', [new ProviderNotLinkedError()], LIMITED),
  409: refusal(
    'The provider is the only way to sign in to the account (no password, no other provider): set a password first',
    [new OnlyWayInError()],
    LIMITED,
  ),
  429: rateLimited(),
  500: failed(LIMITED),
  503: retryLater(
    'The link may or may not have been removed (R7.3): retry',
    [new WriteOutcomeUnknownError()],
    LIMITED,
  ),
})
