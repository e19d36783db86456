import { createHash, timingSafeEqual } from 'node:crypto'
import type { Account } from '../auth/account.js'
import { toAccount } from '../auth/account.js'
import type { SecondStepGate, SignIn, StartSession } from '../auth/session-starter.js'
import {
  AccessTokenInvalidError,
  ExchangeCodeRefusedError,
  InvalidCredentialsError,
  OnlyWayInError,
  ProviderNotLinkedError,
} from '../errors.js'
import type { RecordSecurityEvent, RequestContext } from '../security-event.js'
import type { UserRecord, UserStore } from '../storage/stores.js'
import type { ProviderClient } from './provider-client.js'
import type { ProviderSignIn, SignInMatch } from './provider-sign-in.js'
import type { SignInFailure } from './sign-in-failure.js'
import type { ApplicationReturn, SignInTickets } from './sign-in-state.js'

/** How a callback of a configured provider ended, as GET /metrics counts it. */
export type SignInOutcome = SignInMatch | SignInFailure

export interface SignInFlowDeps {
  /** The configured providers, by name (provider-clients.ts). */
  clients: ReadonlyMap<string, ProviderClient>
  tickets: SignInTickets
  accounts: ProviderSignIn
  users: Pick<UserStore, 'findById'>
  startSession: StartSession
  /** The second step (docs/api.md §4.25): an account with a second factor gets its challenge, not a session. */
  secondStep: SecondStepGate | null
  record: RecordSecurityEvent
  log: { warn(fields: Record<string, unknown>, message: string): void }
  /** The service's public base URL, BASE_PATH included; null only when no provider is configured. */
  publicBaseUrl: string | null
  /** FRONTEND_ORIGIN: the only origin `redirect_to` may name. */
  frontendOrigin: string | null
  /** Counts each callback's outcome (METRICS_PORT); absent or null, nothing is counted. */
  observer?: { signIn(provider: string, outcome: SignInOutcome): void } | null
}

/** Where the start sends the browser, or why it does not. */
export type StartOutcome = { authorizationUrl: URL; state: string } | { failure: SignInFailure }

/** What came back to the callback. */
export interface CallbackInput {
  /** The `state` parameter; null when absent. */
  state: string | null
  /** The state in the browser's cookie (tessera_oauth); null when it sent none. */
  cookieState: string | null
  /** The provider's `error` parameter; null when absent. */
  error: string | null
  /** The callback's query string as received, `?` included ('' when none): the provider's whole answer. */
  search: string
}

/**
 * How the callback ends: a session for the popup's page, a one-time code for `redirect_to`, or a failure (with the
 * `redirect_to` of its sign-in when one was found).
 */
export type CallbackOutcome =
  | { session: SignIn }
  | { redirectTo: string; code: string }
  | { failure: SignInFailure; redirectTo: string | null }

/** Sign-in with providers (docs/api.md §4.24), from the start to the session, without HTTP. */
export interface SignInFlow {
  /** The names of the configured providers, in OAUTH_PROVIDERS's order. */
  readonly providers: readonly string[]
  /** GET /auth/oauth/<provider>/start; `codeChallenge` is required with `redirectTo`, and not used without it. */
  start(provider: string, redirectTo: string | null, codeChallenge: string | null): Promise<StartOutcome>
  /** GET /auth/oauth/<provider>/callback. */
  callback(provider: string, input: CallbackInput, context: RequestContext): Promise<CallbackOutcome>
  /**
   * POST /auth/oauth/exchange: the login answer a one-time code stands for, given the verifier of the challenge its
   * sign-in started with; ExchangeCodeRefusedError otherwise. The code is used up either way.
   */
  exchange(code: string, codeVerifier: string | null, context: RequestContext): Promise<SignIn>
  /** DELETE /auth/oauth/<provider>: the account as it is now; ProviderNotLinkedError, OnlyWayInError. */
  unlink(userId: string, provider: string, context: RequestContext): Promise<Account>
}

/** The longest `redirect_to` taken: a URL of the application, not a place to carry data. */
const MAX_REDIRECT_LENGTH = 2048

/** RFC 7636's S256 `code_challenge`: BASE64URL(SHA-256(code_verifier)), 43 characters without padding. */
export const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
/** RFC 7636's `code_verifier`: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

export function createSignInFlow(deps: SignInFlowDeps): SignInFlow {
  const { clients, tickets, accounts, users, record, log } = deps
  const redirectUri = (provider: string) => `${deps.publicBaseUrl}/auth/oauth/${provider}/callback`

  /**
   * A session for the account, recorded as a login, or its second-factor challenge; null when it can no longer log
   * in (disabled, deleted).
   */
  const startSession = async (user: UserRecord, context: RequestContext): Promise<SignIn | null> => {
    try {
      if (user.status !== 'active') return null
      const challenge = await deps.secondStep?.(user, context, 'provider')
      if (challenge) return challenge
      const session = await deps.startSession(user, context)
      record('login_succeeded', user.id, context, 'provider')
      return session
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return null
      throw error
    }
  }

  /** Counts the outcome and hands it on. */
  const ended = <T extends CallbackOutcome>(provider: string, outcome: SignInOutcome, result: T): T => {
    deps.observer?.signIn(provider, outcome)
    return result
  }

  return {
    providers: [...clients.keys()],

    async start(provider, redirectTo, codeChallenge) {
      const client = clients.get(provider)
      if (client === undefined) return { failure: 'provider_unknown' }
      let back: ApplicationReturn = { redirectTo: null, exchangeChallenge: null }
      if (redirectTo !== null) {
        if (!isApplicationAddress(redirectTo, deps.frontendOrigin)) return { failure: 'redirect_refused' }
        // the code of redirect_to is bound to the application that started the sign-in: without a challenge,
        // whoever stopped at the redirect with their own code could have another person's application signed in
        // with it (login CSRF)
        if (codeChallenge === null || !CODE_CHALLENGE.test(codeChallenge))
          return { failure: 'challenge_refused' }
        back = { redirectTo, exchangeChallenge: codeChallenge }
      }
      const pending = await tickets.begin(provider, back)
      try {
        const authorizationUrl = await client.authorizationUrl({
          redirectUri: redirectUri(provider),
          ...pending,
        })
        return { authorizationUrl, state: pending.state }
      } catch (error) {
        // the ticket stored for it expires unused
        log.warn({ err: error, provider }, 'the sign-in provider could not be reached')
        return { failure: 'provider_unavailable' }
      }
    },

    async callback(provider, input, context) {
      const client = clients.get(provider)
      if (client === undefined) return { failure: 'provider_unknown', redirectTo: null }
      // the state must be this browser's (its cookie): a callback carried to another browser, or forged in one, is
      // refused before the sign-in it names is used up
      if (input.state === null || input.cookieState === null || !sameSecret(input.state, input.cookieState))
        return ended(provider, 'state_invalid', { failure: 'state_invalid', redirectTo: null })
      const pending = await tickets.finish(input.state)
      if (pending === null || pending.provider !== provider)
        return ended(provider, 'state_invalid', { failure: 'state_invalid', redirectTo: null })
      const { redirectTo, exchangeChallenge } = pending
      if (input.error !== null) {
        const failure = input.error === 'access_denied' ? 'cancelled' : 'failed'
        log.warn({ provider, error: input.error.slice(0, 64) }, 'the sign-in provider answered an error')
        return ended(provider, failure, { failure, redirectTo })
      }
      let identity: Awaited<ReturnType<ProviderClient['identify']>>
      try {
        const callbackUrl = new URL(`${redirectUri(provider)}${input.search}`)
        identity = await client.identify(callbackUrl, {
          redirectUri: redirectUri(provider),
          state: input.state,
          ...pending,
        })
      } catch (error) {
        log.warn({ err: error, provider }, 'the sign-in provider did not confirm the sign-in')
        return ended(provider, 'failed', { failure: 'failed', redirectTo })
      }
      const resolved = await accounts.resolve(provider, identity, context)
      if ('failure' in resolved)
        return ended(provider, resolved.failure, { failure: resolved.failure, redirectTo })
      if (redirectTo !== null) {
        // the session starts at the exchange: tokens never travel in a URL
        const code = await tickets.issueCode({ userId: resolved.user.id, provider, exchangeChallenge })
        return ended(provider, resolved.match, { redirectTo, code })
      }
      const session = await startSession(resolved.user, context)
      if (session === null) return ended(provider, 'failed', { failure: 'failed', redirectTo })
      return ended(provider, resolved.match, { session })
    },

    async exchange(code, codeVerifier, context) {
      const grant = await tickets.redeemCode(code)
      // the code is used up whatever the verifier: a code sent on by someone else is not theirs to try again, and a
      // wrong verifier is answered as an unknown code is
      if (grant === null || codeVerifier === null || !verifies(codeVerifier, grant.exchangeChallenge))
        throw new ExchangeCodeRefusedError()
      const user = await users.findById(grant.userId)
      const session = user === null ? null : await startSession(user, context)
      if (session === null) throw new ExchangeCodeRefusedError()
      return session
    },

    async unlink(userId, provider, context) {
      const result = await accounts.unlink(userId, provider, context)
      if (result === 'not_linked') throw new ProviderNotLinkedError()
      if (result === 'only_way_in') throw new OnlyWayInError()
      const user = await users.findById(userId)
      if (user === null) throw new AccessTokenInvalidError()
      return toAccount(user)
    },
  }
}

/** Whether two secrets are the same, in a time that does not tell how much of them matched. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8')
  const b = Buffer.from(expected, 'utf8')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Whether `verifier` is the RFC 7636 verifier of the S256 `challenge`, compared in constant time. */
function verifies(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER.test(verifier)) return false
  return sameSecret(createHash('sha256').update(verifier, 'ascii').digest('base64url'), challenge)
}

/**
 * Whether `value` is an absolute http(s) URL of FRONTEND_ORIGIN, without credentials and of a sane length: the only
 * place a sign-in may send the browser back to with a code (anywhere else, the code would be an open redirect's
 * gift to whoever chose it).
 */
export function isApplicationAddress(value: string, frontendOrigin: string | null): boolean {
  if (frontendOrigin === null || value.length > MAX_REDIRECT_LENGTH || !URL.canParse(value)) return false
  const url = new URL(value)
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    url.origin === frontendOrigin
  )
}
