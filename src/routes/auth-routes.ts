import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { AccountService, LoginContext } from '../auth/account-service.js'
import { success } from '../http/envelope.js'
import {
  loginResponses,
  logoutResponses,
  meResponses,
  refreshResponses,
  registerResponses,
} from '../http/responses.js'
import { LoginBody, RefreshBody, RegisterBody } from '../http/schemas.js'

/** The API document's security requirements: none for a public operation, the access token for a protected one. */
const PUBLIC: [] = []
const BEARER_AUTH = [{ bearerAuth: [] }]

/**
 * Whom the account service works for, built once per request: the one place the client address goes in (the login
 * throttle, the Argon2 queue and the security events read it from there; docs/api.md R8.2 to R8.6, "Audit events").
 * An HTTP request always has both its address and its id.
 */
const requestContext = (request: FastifyRequest): LoginContext => ({
  clientAddress: request.ip,
  requestId: request.id,
})

export interface AuthRoutesOptions {
  accounts: AccountService
  /**
   * Per-route rate limit of register and refresh, every attempt counted (docs/api.md R8.1); null when limiting is
   * off. Login is limited on failures by the account service instead (R8.4).
   */
  rateLimit: { max: number; timeWindow: number } | null
}

/** spec 4.3 to 4.5: the public auth endpoints. */
export const publicAuthRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (
  app,
  { accounts, rateLimit },
) => {
  const config = { rateLimit: rateLimit ?? false }

  app.post(
    '/auth/register',
    {
      config,
      schema: {
        operationId: 'register',
        tags: ['auth'],
        summary: 'Create an account and log it in',
        description:
          "Creates an account for the e-mail address (trimmed and lower-cased) with the password, stored only as an Argon2id hash, and logs it in: the answer carries a new token pair, and the refresh token is stored as the account's one current refresh token. An address already registered is a 409. Register and refresh each allow RATE_LIMIT_PER_MINUTE requests per client address and minute.",
        security: PUBLIC,
        body: RegisterBody,
        response: registerResponses(),
      },
    },
    async (request) => {
      const { account, tokens } = await accounts.register(request.body, requestContext(request))
      return success({
        email: account.email,
        created_at: account.createdAt,
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
      })
    },
  )

  app.post(
    '/auth/login',
    {
      config: { rateLimit: false },
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in with e-mail and password',
        description:
          'Checks the password and answers the account and a new token pair; the new refresh token replaces any stored one. A wrong e-mail and a wrong password get the same 401, so no account can be found out. Failed logins are limited per client address and slowed per e-mail (429 with Retry-After).',
        security: PUBLIC,
        body: LoginBody,
        response: loginResponses(),
      },
    },
    async (request) => {
      const { account, tokens } = await accounts.login(request.body, requestContext(request))
      return success({
        id: account.id,
        email: account.email,
        created_at: account.createdAt,
        access_token: tokens.accessToken,
        refresh_token: tokens.refreshToken,
      })
    },
  )

  app.post(
    '/auth/refresh',
    {
      config,
      schema: {
        operationId: 'refreshTokens',
        tags: ['auth'],
        summary: 'Exchange a refresh token for a new token pair (single use)',
        description:
          'Rotates the refresh token: if it verifies and is still the stored one, it is replaced at once by the new one and a new pair is answered. Each refresh token works once; a second use, or one that is expired, logged out or replaced by a login, is a 401: log in again.',
        security: PUBLIC,
        body: RefreshBody,
        response: refreshResponses(),
      },
    },
    async (request) => {
      const tokens = await accounts.refresh(request.body.refresh_token, requestContext(request))
      return success({ access_token: tokens.accessToken, refresh_token: tokens.refreshToken })
    },
  )
}

/** spec 4.6 and docs/api.md §4.7 (GET /auth/me): registered inside the scope that runs the authentication guard. */
export const protectedAuthRoutes: FastifyPluginAsyncTypebox<Pick<AuthRoutesOptions, 'accounts'>> = async (
  app,
  { accounts },
) => {
  app.post(
    '/auth/delete-refresh-token',
    {
      schema: {
        operationId: 'logout',
        tags: ['auth'],
        summary: 'Log out: delete the stored refresh token',
        description:
          "Deletes the caller's stored refresh token, so that no refresh works until the next login. Takes no body. The access token itself stays valid until it expires.",
        security: BEARER_AUTH,
        response: logoutResponses(),
      },
    },
    async (request) => {
      await accounts.logout(request.userId, requestContext(request))
      return success(null)
    },
  )

  app.get(
    '/auth/me',
    {
      schema: {
        operationId: 'getCurrentUser',
        tags: ['auth'],
        summary: 'The authenticated account',
        description:
          'The account the access token names: its id, e-mail address and creation time. A token whose account no longer exists is a 401.',
        security: BEARER_AUTH,
        response: meResponses(),
      },
    },
    async (request) => {
      const account = await accounts.me(request.userId)
      return success({ id: account.id, email: account.email, created_at: account.createdAt })
    },
  )
}
