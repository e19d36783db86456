import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isChallenge } from '../auth/session-starter.js'
import { accountData, signInData } from '../http/account-data.js'
import { languageOf, markLanguage } from '../http/answer-language.js'
import { success } from '../http/envelope.js'
import {
  CallbackQuery,
  callbackResponses,
  ExchangeBody,
  exchangeResponses,
  ProviderPageParams,
  ProviderParams,
  providersResponses,
  STATE_COOKIE,
  StartQuery,
  startResponses,
  unlinkResponses,
} from '../http/provider-schemas.js'
import { render } from '../language/catalogues.js'
import { message } from '../language/message.js'
import { CALLBACK_PAGE_HEADERS, callbackPage } from '../providers/callback-page.js'
import { SIGN_IN_FAILURES, SIGNED_IN, type SignInFailure } from '../providers/sign-in-failure.js'
import type { SignInFlow } from '../providers/sign-in-flow.js'
import { SIGN_IN_TTL_SECONDS } from '../providers/sign-in-state.js'
import { BEARER_AUTH, PUBLIC, requestContext } from './route-parts.js'

export interface OAuthRoutesOptions {
  flow: SignInFlow
  /** FRONTEND_ORIGIN: where the callback page posts its result; null when there is no public base URL. */
  frontendOrigin: string | null
  /** BASE_PATH: the state cookie's path starts with it, and `avatar_url` carries it. */
  basePath: string
  /** Whether the public base URL is https: the state cookie is then Secure. */
  secureCookie: boolean
  /** Per-route rate limit, every request counted (docs/api.md R8.1); null when limiting is off. */
  rateLimit: { max: number; timeWindow: number } | null
}

/**
 * docs/api.md §4.24: sign-in with providers. The start and the callback are browser navigations (DECISIONS "Beyond
 * the specification"): they answer redirects and small pages, never the envelope, but for a rate limit or an
 * unforeseen failure. The exchange and the list of providers are JSON.
 */
export const publicOAuthRoutes: FastifyPluginAsyncTypebox<OAuthRoutesOptions> = async (app, options) => {
  const { flow, frontendOrigin, basePath, rateLimit } = options
  const config = { rateLimit: rateLimit ?? false }
  const cookie = stateCookie(basePath, options.secureCookie)

  /**
   * A callback page with the result for `provider`, in the request's language (docs/api.md §1.5); `data` is a login
   * answer's on success.
   */
  const sendPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    provider: string,
    result: PageResult,
  ) => {
    const language = languageOf(request.headers)
    const text =
      result.failure !== null
        ? SIGN_IN_FAILURES[result.failure]
        : result.secondFactor
          ? SECOND_FACTOR_REQUIRED
          : SIGNED_IN
    return markLanguage(reply.code(status).headers(CALLBACK_PAGE_HEADERS), language)
      .type('text/html; charset=utf-8')
      .send(
        callbackPage(
          frontendOrigin,
          {
            type: 'auth:oauth:result',
            success: result.failure === null,
            provider,
            message: render(language, text),
            data: result.data,
          },
          language,
        ),
      )
  }
  const failurePage = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    provider: string,
    failure: SignInFailure,
  ) => sendPage(request, reply, status, provider, { failure, data: null })

  app.get(
    '/auth/oauth/providers',
    {
      schema: {
        operationId: 'listProviders',
        tags: ['auth'],
        summary: 'The providers one can sign in with',
        description: 'The names of OAUTH_PROVIDERS, in its order: the sign-in buttons an application shows.',
        security: PUBLIC,
        response: providersResponses(),
      },
    },
    async () => success({ providers: [...flow.providers] }),
  )

  app.get(
    '/auth/oauth/:provider/start',
    {
      config,
      // a malformed query (a parameter given twice) is a failure page, not the envelope
      attachValidation: true,
      schema: {
        operationId: 'startProviderSignIn',
        tags: ['auth'],
        summary: 'Start a sign-in with a provider (a browser navigation)',
        description:
          "Opened in a popup (`window.open('<base>/auth/oauth/<provider>/start')`), or navigated to with `redirect_to` and the application's `code_challenge`: redirects to the provider with PKCE, a state and a nonce, and sets a short-lived cookie that ties the state to this browser. An unknown or unconfigured provider gets, at once, a page that posts the failure to the opener.",
        security: PUBLIC,
        params: ProviderPageParams,
        querystring: StartQuery,
        response: startResponses(),
      },
    },
    async (request, reply) => {
      const { provider } = request.params
      if (request.validationError)
        return failurePage(request, reply, 400, provider, startQueryFailure(request.validationError))
      const { redirect_to: redirectTo, code_challenge: codeChallenge } = request.query
      const started = await flow.start(provider, redirectTo ?? null, codeChallenge ?? null)
      if ('failure' in started)
        return failurePage(request, reply, startStatus(started.failure), provider, started.failure)
      return reply
        .header('set-cookie', cookie.set(started.state))
        .header('referrer-policy', 'no-referrer')
        .redirect(started.authorizationUrl.href, 302)
    },
  )

  app.get(
    '/auth/oauth/:provider/callback',
    {
      config,
      attachValidation: true,
      schema: {
        operationId: 'finishProviderSignIn',
        tags: ['auth'],
        summary: "The provider's return (a browser navigation)",
        description:
          "Checks that the state is this browser's (its cookie) and uses it up, redeems the code, and finds the account: the one linked to the provider account; else, when the provider vouches for the address, the account that has it (linked, its owner told by mail); else a new account without a password. Answers a page that posts `{type: 'auth:oauth:result', success, provider, message, data}` to its opener at FRONTEND_ORIGIN and closes itself, `data` being a login answer's; with `redirect_to` at the start, a redirect there with a one-time `code` instead.",
        security: PUBLIC,
        params: ProviderPageParams,
        querystring: CallbackQuery,
        response: callbackResponses(),
      },
    },
    async (request, reply) => {
      const { provider } = request.params
      // whatever the outcome, the state is spent: the cookie goes
      reply.header('set-cookie', cookie.clear)
      const query: CallbackQuery = request.validationError ? {} : request.query
      const search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''
      const outcome = await flow.callback(
        provider,
        {
          state: query.state ?? null,
          cookieState: cookieValue(request.headers.cookie, STATE_COOKIE),
          error: query.error ?? null,
          search,
        },
        requestContext(request),
      )
      if ('session' in outcome)
        return sendPage(request, reply, 200, provider, {
          failure: null,
          secondFactor: isChallenge(outcome.session),
          data: signInData(outcome.session, basePath),
        })
      if ('code' in outcome) return redirectBack(reply, outcome.redirectTo, { code: outcome.code })
      if (outcome.redirectTo !== null)
        return redirectBack(reply, outcome.redirectTo, { error: outcome.failure })
      return failurePage(
        request,
        reply,
        outcome.failure === 'provider_unknown' ? 404 : 200,
        provider,
        outcome.failure,
      )
    },
  )

  app.post(
    '/auth/oauth/exchange',
    {
      config,
      schema: {
        operationId: 'exchangeProviderCode',
        tags: ['auth'],
        summary: 'Exchange the one-time code of a redirect_to sign-in for a login answer',
        description:
          "The code the callback added to `redirect_to`, good once and for 60 seconds, with the `code_verifier` of the start's `code_challenge` (RFC 7636, S256), for the login answer of POST /auth/login: tokens never travel in a URL, and only the application that started the sign-in can redeem its code. A wrong, used or expired code, or a missing or wrong verifier (which uses the code up), is a 400.",
        security: PUBLIC,
        body: ExchangeBody,
        response: exchangeResponses(),
      },
    },
    async (request) => {
      const { code, code_verifier: codeVerifier } = request.body
      return success(
        signInData(await flow.exchange(code, codeVerifier ?? null, requestContext(request)), basePath),
      )
    },
  )
}

/** DELETE /auth/oauth/<provider>, registered inside the scope that runs the authentication guard. */
export const protectedOAuthRoutes: FastifyPluginAsyncTypebox<OAuthRoutesOptions> = async (app, options) => {
  const { flow, basePath, rateLimit } = options
  app.delete(
    '/auth/oauth/:provider',
    {
      config: { rateLimit: rateLimit ?? false },
      schema: {
        operationId: 'unlinkProvider',
        tags: ['auth'],
        summary: "Unlink a provider from the caller's account",
        description:
          "The provider account no longer signs in to the caller's account. Refused with 409 when it is the account's only way in (no password, no other provider).",
        security: BEARER_AUTH,
        params: ProviderParams,
        response: unlinkResponses(),
      },
    },
    async (request) =>
      success(
        accountData(
          await flow.unlink(request.userId, request.params.provider, requestContext(request)),
          basePath,
        ),
      ),
  )
}

/**
 * The status of a start's failure page: no such provider, a refused redirect_to or code_challenge, or a provider out
 * of reach.
 */
function startStatus(failure: SignInFailure): number {
  if (failure === 'provider_unknown') return 404
  if (failure === 'redirect_refused' || failure === 'challenge_refused') return 400
  return 502
}

/** The failure a start's query not valid by its schema names: a code_challenge not of its form, else redirect_to. */
function startQueryFailure(error: { validation?: Array<{ instancePath?: string }> }): SignInFailure {
  return error.validation?.some((issue) => issue.instancePath === '/code_challenge')
    ? 'challenge_refused'
    : 'redirect_refused'
}

/** A page's result: the failure, or null with the login answer's data. */
/** docs/api.md §4.25: the popup of an account with a second factor posts `success: true`, this and the challenge. */
const SECOND_FACTOR_REQUIRED = message('error.second_factor_required')

type PageResult =
  | { failure: SignInFailure; data: null }
  | { failure: null; secondFactor: boolean; data: unknown }

/**
 * The state cookie: HttpOnly (no script reads it), SameSite=Lax (sent on the provider's top-level redirect back, not
 * on a cross-site subrequest), Secure over HTTPS, scoped to the sign-in routes and living as long as a sign-in may.
 */
function stateCookie(basePath: string, secure: boolean) {
  const attributes = `Path=${basePath}/auth/oauth/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
  return {
    set: (state: string) => `${STATE_COOKIE}=${state}; ${attributes}; Max-Age=${SIGN_IN_TTL_SECONDS}`,
    clear: `${STATE_COOKIE}=; ${attributes}; Max-Age=0`,
  }
}

/** The value of the cookie `name` in a Cookie header; null when absent. */
function cookieValue(header: string | undefined, name: string): string | null {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim()
  }
  return null
}

/** A 302 back to the application's `redirectTo` with the parameters added to its query. */
function redirectBack(reply: FastifyReply, redirectTo: string, parameters: Record<string, string>) {
  const url = new URL(redirectTo)
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value)
  // the code must not leak from the application's page through its Referer
  return reply.header('referrer-policy', 'no-referrer').redirect(url.href, 302)
}
