import { expect } from 'vitest'
import { createFixedClock } from '../../src/clock.js'
import { backends } from '../support/backends.js'
import { call, decodeJwt, type Registered, type Reply, registerUser } from '../support/http.js'
import { MESSAGES } from '../support/messages.js'
import { startTestService, type TestService } from '../support/test-service.js'

/** A secret no token of the main service was signed with; the second service signs with it. */
export const OTHER_SECRET = 'other-secret-9876543210-ZYXWVUTSRQPONMLKJIHGFEDCBA'

/** The two challenges of docs/api.md R5.4. */
export const CHALLENGE = { bare: 'Bearer', invalidToken: 'Bearer error="invalid_token"' } as const

/**
 * Two running services on one clock that stands still: `service` signs with TEST_SECRET, `other` with
 * OTHER_SECRET; a user registered on each, and a token of `service` altered after signing.
 */
export interface MintedTokens {
  clock: ReturnType<typeof createFixedClock>
  service: TestService
  other: TestService
  user: Registered
  otherUser: Registered
  /** The user's access token with its `sub` changed to the other user's id, the signature kept. */
  tampered: string
  /** GET /auth/me on `service` with this Authorization header (none when undefined). */
  me(authorization: string | undefined): Promise<Reply>
  close(): Promise<void>
}

// the embedded store, which every machine has: the verifier's behaviour does not depend on the store
export const sqlite = backends.find((backend) => backend.name === 'sqlite')!

export async function mintTokens(): Promise<MintedTokens> {
  const clock = createFixedClock(Date.now())
  const service = await startTestService(sqlite, { clock })
  const other = await startTestService(sqlite, { clock, env: { AUTH_JWT_SECRET: OTHER_SECRET } })
  const user = await registerUser(service.app)
  const otherUser = await registerUser(other.app)
  const [header, , signature] = user.accessToken.split('.')
  const claims = { ...decodeJwt(user.accessToken).claims, sub: otherUser.id }
  const tampered = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`
  return {
    clock,
    service,
    other,
    user,
    otherUser,
    tampered,
    me: (authorization) =>
      call(service.app, 'GET', '/auth/me', {
        headers: authorization === undefined ? {} : { authorization },
      }),
    async close() {
      await Promise.all([service.close(), other.close()])
    },
  }
}

/** A request the verifier, the guards and the service all refuse, with the service's 401 (docs/api.md R5.2, R5.4). */
export interface Refusal {
  name: string
  authorization: (tokens: MintedTokens) => string | undefined
  message: string
  code: string
  challenge: string
}

const withToken = (token: string) => `Bearer ${token}`

export const REFUSALS: readonly Refusal[] = [
  {
    name: 'no Authorization header',
    authorization: () => undefined,
    message: MESSAGES.authorizationMissing,
    code: 'authorization_missing',
    challenge: CHALLENGE.bare,
  },
  ...(
    [
      ['a lower-case scheme', (token: string) => `bearer ${token}`],
      ['another scheme', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
      ['the scheme alone', () => 'Bearer'],
      ['two spaces', (token: string) => `Bearer  ${token}`],
      ['a token followed by more', (token: string) => `Bearer ${token} more`],
    ] as const
  ).map(([name, header]) => ({
    name: `a malformed header: ${name}`,
    authorization: (tokens: MintedTokens) => header(tokens.user.accessToken),
    message: MESSAGES.authorizationMalformed,
    code: 'authorization_malformed',
    challenge: CHALLENGE.bare,
  })),
  {
    name: 'a tampered token (sub changed after signing)',
    authorization: (tokens) => withToken(tokens.tampered),
    message: MESSAGES.accessTokenInvalid,
    code: 'access_token_invalid',
    challenge: CHALLENGE.invalidToken,
  },
  {
    name: 'a token signed with another secret (minted by another service)',
    authorization: (tokens) => withToken(tokens.otherUser.accessToken),
    message: MESSAGES.accessTokenInvalid,
    code: 'access_token_invalid',
    challenge: CHALLENGE.invalidToken,
  },
  {
    name: 'a token that is no JWT',
    authorization: () => withToken('x.y.z'),
    message: MESSAGES.accessTokenInvalid,
    code: 'access_token_invalid',
    challenge: CHALLENGE.invalidToken,
  },
  {
    name: 'a refresh token (wrong type)',
    authorization: (tokens) => withToken(tokens.user.refreshToken),
    message: MESSAGES.tokenWrongType,
    code: 'token_wrong_type',
    challenge: CHALLENGE.invalidToken,
  },
]

/** The answer of the service itself to `refusal`: the reference every guard is held to. */
export async function expectServiceRefuses(tokens: MintedTokens, refusal: Refusal): Promise<void> {
  const reply = await tokens.me(refusal.authorization(tokens))
  expect(reply.status, reply.text).toBe(401)
  expect(reply.body).toEqual({ code: 401, message: refusal.message, data: null })
  expect(reply.headers['www-authenticate']).toBe(refusal.challenge)
}
