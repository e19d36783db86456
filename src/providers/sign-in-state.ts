import { createOneTimeTickets, randomSecret } from '../auth/one-time-tickets.js'
import type { Clock } from '../clock.js'
import type { TicketKind, TicketStore } from '../storage/stores.js'

/** A provider sign-in between its start and its callback (docs/api.md §4.24). */
export type PendingSignIn = {
  provider: string
  /** OpenID Connect's nonce, which the ID token must carry. */
  nonce: string
  /** PKCE's verifier, which the token request must present. */
  codeVerifier: string
} & ApplicationReturn

/**
 * Where the callback sends the browser with a one-time code (`?redirect_to=`), and the application's PKCE challenge
 * (`?code_challenge=`, S256) that the code is bound to, so that only the application that started the sign-in can
 * redeem it; both null for the popup's page.
 */
export type ApplicationReturn =
  | { redirectTo: string; exchangeChallenge: string }
  | { redirectTo: null; exchangeChallenge: null }

/**
 * What a one-time exchange code stands for: the account a callback signed in, its session not started yet, and the
 * challenge of the application that started the sign-in, whose verifier the exchange must present.
 */
export interface ExchangeGrant {
  userId: string
  provider: string
  exchangeChallenge: string
}

/** The sign-ins in progress and the exchange codes, as one-time tickets of the shared TicketStore. */
export interface SignInTickets {
  /**
   * Stores a new sign-in for ten minutes: its state (what the cookie and the provider carry), nonce and verifier, and
   * where it returns to.
   */
  begin(provider: string, back: ApplicationReturn): Promise<{ state: string } & PendingSignIn>
  /** Uses up the sign-in of `state`: its details, or null when there is none (unknown, used, expired). */
  finish(state: string): Promise<PendingSignIn | null>
  /** Stores a one-time exchange code for a minute; resolves with the code. */
  issueCode(grant: ExchangeGrant): Promise<string>
  /** Uses up `code`: its grant, or null when there is none (unknown, used, expired). */
  redeemCode(code: string): Promise<ExchangeGrant | null>
}

export interface SignInTicketsDeps {
  tickets: TicketStore
  /** AUTH_JWT_SECRET, from which the key of the tickets' digests is derived. */
  secret: string
  clock: Clock
}

/** How long a sign-in may take at the provider, and the state cookie lives. */
export const SIGN_IN_TTL_SECONDS = 600
/** How long an exchange code is good: the application redeems it as soon as its page loads. */
export const EXCHANGE_CODE_TTL_SECONDS = 60

/**
 * DECISIONS "Secrets never leave the service readable": a ticket is stored under HMAC-SHA-256 of its secret (the
 * state, the code) with a key derived from AUTH_JWT_SECRET, and its payload sealed by AES-256-GCM under a key derived
 * from the secret itself. Whoever reads the table (a backup, a replica) can neither find a ticket's secret nor read
 * the nonce and PKCE verifier of a sign-in in progress; whoever can write it cannot make a ticket the service opens.
 * A ticket is used up by TicketStore.take, one statement: of concurrent callbacks with one state, from any number of
 * instances, one gets it.
 */
export function createSignInTickets(deps: SignInTicketsDeps): SignInTickets {
  const { clock } = deps
  const tickets = createOneTimeTickets(deps)
  const put = (kind: TicketKind, payload: object, ttlSeconds: number): Promise<string> =>
    tickets.put(kind, payload, clock.now() + ttlSeconds * 1000)
  const take = tickets.take

  return {
    async begin(provider, back) {
      const pending: PendingSignIn = {
        provider,
        nonce: randomSecret(),
        codeVerifier: randomSecret(),
        ...back,
      }
      const state = await put('oauth_state', pending, SIGN_IN_TTL_SECONDS)
      return { state, ...pending }
    },
    async finish(state) {
      const value = await take('oauth_state', state)
      if (
        value === null ||
        typeof value.provider !== 'string' ||
        typeof value.nonce !== 'string' ||
        typeof value.codeVerifier !== 'string'
      )
        return null
      const { provider, nonce, codeVerifier, redirectTo, exchangeChallenge } = value
      // redirect_to always with a challenge (a sign-in started before codes were bound to one is no sign-in now)
      if (typeof redirectTo === 'string' && typeof exchangeChallenge === 'string')
        return { provider, nonce, codeVerifier, redirectTo, exchangeChallenge }
      if (redirectTo === null && exchangeChallenge === null)
        return { provider, nonce, codeVerifier, redirectTo, exchangeChallenge }
      return null
    },
    issueCode: (grant) => put('oauth_exchange', grant, EXCHANGE_CODE_TTL_SECONDS),
    async redeemCode(code) {
      const value = await take('oauth_exchange', code)
      if (
        value === null ||
        typeof value.userId !== 'string' ||
        typeof value.provider !== 'string' ||
        typeof value.exchangeChallenge !== 'string'
      )
        return null
      return { userId: value.userId, provider: value.provider, exchangeChallenge: value.exchangeChallenge }
    },
  }
}
