import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
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

const DIGEST_INFO = 'tessera oauth tickets v1'
const SEAL_INFO = 'tessera oauth ticket seal v1'
const PREFIX = 'v1.'
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * DECISIONS "Secrets never leave the service readable": a ticket is stored under HMAC-SHA-256 of its secret (the
 * state, the code) with a key derived from AUTH_JWT_SECRET, and its payload sealed by AES-256-GCM under a key derived
 * from the secret itself. Whoever reads the table (a backup, a replica) can neither find a ticket's secret nor read
 * the nonce and PKCE verifier of a sign-in in progress; whoever can write it cannot make a ticket the service opens.
 * A ticket is used up by TicketStore.take, one statement: of concurrent callbacks with one state, from any number of
 * instances, one gets it.
 */
export function createSignInTickets(deps: SignInTicketsDeps): SignInTickets {
  const { tickets, clock } = deps
  const digestKey = Buffer.from(hkdfSync('sha256', deps.secret, '', DIGEST_INFO, 32))
  const digest = (kind: TicketKind, secret: string) =>
    createHmac('sha256', digestKey).update(`${kind}:${secret}`).digest('hex')

  const put = async (kind: TicketKind, payload: object, ttlSeconds: number): Promise<string> => {
    const secret = randomSecret()
    await tickets.put({
      digest: digest(kind, secret),
      kind,
      payload: seal(kind, secret, JSON.stringify(payload)),
      expiresAt: clock.now() + ttlSeconds * 1000,
    })
    return secret
  }
  const take = async (kind: TicketKind, secret: string): Promise<Record<string, unknown> | null> => {
    // a value no ticket could have is not looked up (a secret is 43 characters of base64url)
    if (!SECRET.test(secret)) return null
    const payload = await tickets.take(digest(kind, secret), kind, clock.now())
    if (payload === null) return null
    const text = open(kind, secret, payload)
    if (text === null) return null
    try {
      const value: unknown = JSON.parse(text)
      return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null
    } catch {
      return null
    }
  }

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

/** 256 random bits as base64url (43 characters): a state, a nonce, a PKCE verifier, an exchange code. */
function randomSecret(): string {
  return randomBytes(32).toString('base64url')
}
const SECRET = /^[A-Za-z0-9_-]{43}$/

/** The key a ticket's payload is sealed with: derived from its own secret, which the store never holds. */
function sealKey(kind: TicketKind, secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, kind, SEAL_INFO, 32))
}

function seal(kind: TicketKind, secret: string, text: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', sealKey(kind, secret), iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(kind, 'utf8'))
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
}

/** The sealed text, or null when it does not authenticate under the secret's key. */
function open(kind: TicketKind, secret: string, payload: string): string | null {
  if (!payload.startsWith(PREFIX)) return null
  const bytes = Buffer.from(payload.slice(PREFIX.length), 'base64url')
  if (bytes.length < IV_BYTES + TAG_BYTES) return null
  const decipher = createDecipheriv('aes-256-gcm', sealKey(kind, secret), bytes.subarray(0, IV_BYTES), {
    authTagLength: TAG_BYTES,
  })
  decipher.setAAD(Buffer.from(kind, 'utf8'))
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8')
  } catch {
    return null
  }
}
