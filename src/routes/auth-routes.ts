import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { AccountService, LoginContext } from '../auth/account-service.js'
import { SessionNotFoundError } from '../errors.js'
import { success } from '../http/envelope.js'
import {
  endSessionResponses,
  loginResponses,
  logoutResponses,
  meResponses,
  refreshResponses,
  registerResponses,
  sessionsResponses,
} from '../http/responses.js'
import { LoginBody, LogoutQuery, RefreshBody, RegisterBody, SessionParams } from '../http/schemas.js'
import type { Caller, SessionService } from '../sessions/session-service.js'

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
  userAgent: request.headers['user-agent'] ?? null,
})

/** The access token's account and session, as the guard read them. */
const caller = (request: FastifyRequest): Caller => ({ userId: request.userId, sessionId: request.sessionId })

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

/**
 * spec 4.6 and docs/api.md §4.7 (GET /auth/me), §4.11 and §4.12 (sessions): registered inside the scope that runs
 * the authentication guard.
 */
export const protectedAuthRoutes: FastifyPluginAsyncTypebox<
  Pick<AuthRoutesOptions, 'accounts'> & { sessions: SessionService }
> = async (app, { accounts, sessions }) => {
  app.post(
    '/auth/delete-refresh-token',
    {
      schema: {
        operationId: 'logout',
        tags: ['auth'],
        summary: "Log out: end the caller's session",
        description:
          "Ends the caller's session, so that its refresh token no longer works; with `scope=others` the caller's other sessions instead, with `scope=all` every one of them. Takes no body. Access tokens already issued stay valid until they expire.",
        security: BEARER_AUTH,
        querystring: LogoutQuery,
        response: logoutResponses(),
      },
    },
    async (request) => {
      await sessions.logout(caller(request), request.query.scope ?? 'current', requestContext(request))
      return success(null)
    },
  )

  app.get(
    '/auth/sessions',
    {
      schema: {
        operationId: 'listSessions',
        tags: ['auth'],
        summary: "The caller's sessions",
        description:
          "Every session of the caller's account that has not ended, most recently used first: when it started and was last used, the device it started on (from its User-Agent), the network it was last used from, and whether it is the caller's own. With AUTH_SESSIONS=single there is at most one.",
        security: BEARER_AUTH,
        response: sessionsResponses(),
      },
    },
    async (request) => {
      const list = await sessions.list(caller(request))
      return success(
        list.map((session) => ({
          id: session.id,
          created_at: session.createdAt,
          last_used_at: session.lastUsedAt,
          device: session.device,
          client_address: session.clientAddress,
          current: session.current,
        })),
      )
    },
  )

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        operationId: 'endSession',
        tags: ['auth'],
        summary: "End one of the caller's sessions",
        description:
          "Ends the session: its refresh token no longer works. An id that is not one of the caller's sessions is a 404, whether it exists or not. Access tokens already issued stay valid until they expire.",
        security: BEARER_AUTH,
        params: SessionParams,
        response: endSessionResponses(),
      },
    },
    async (request) => {
      if (!(await sessions.end(caller(request), request.params.id, requestContext(request)))) {
        throw new SessionNotFoundError()
      }
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
