import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Account, Session } from '../auth/account.js'
import type { AccountService } from '../auth/account-service.js'
import type { EmailAccountService } from '../auth/email-account-service.js'
import type { SignIn } from '../auth/session-starter.js'
import { SessionNotFoundError } from '../errors.js'
import { accountData, loginData, signInData } from '../http/account-data.js'
import { callerOf } from '../http/authenticate.js'
import { success } from '../http/envelope.js'
import {
  changeEmailResponses,
  changePasswordResponses,
  codeLoginResponses,
  deleteAccountResponses,
  endSessionResponses,
  loginResponses,
  logoutResponses,
  meResponses,
  profileResponses,
  refreshResponses,
  registerResponses,
  resetPasswordResponses,
  sendAccountCodeResponses,
  sendCodeResponses,
  sessionsResponses,
  verifyEmailResponses,
} from '../http/responses.js'
import {
  ChangeEmailBody,
  ChangePasswordBody,
  CodeLoginBody,
  DeleteAccountBody,
  LoginBody,
  LogoutQuery,
  ProfileBody,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  SendAccountCodeBody,
  SendCodeBody,
  SessionParams,
  VerifyEmailBody,
} from '../http/schemas.js'
import type { ProfileService } from '../profile/profile-service.js'
import type { SessionService } from '../sessions/session-service.js'
import { BEARER_AUTH, holderProof, PUBLIC, requestContext } from './route-parts.js'

/**
 * Whom the account service works for, built once per request: the one place the client address goes in (the login
 * throttle, the Argon2 queue and the security events read it from there; docs/api.md R8.2 to R8.6, "Audit events").
 * An HTTP request always has both its address and its id.
 */

export interface AuthRoutesOptions {
  accounts: AccountService
  /** Codes, sign-in by code, reset, change, verification and deletion (docs/api.md §4.14 to §4.21). */
  emailAccounts: EmailAccountService
  /**
   * Per-route rate limit of register and refresh, every attempt counted (docs/api.md R8.1); null when limiting is
   * off. Login is limited on failures by the account service instead (R8.4).
   */
  rateLimit: { max: number; timeWindow: number } | null
  /** BASE_PATH: the prefix of the avatar paths the account answers show (docs/api.md §2.1). */
  basePath: string
}

/** spec 4.3 to 4.5: the public auth endpoints. */
export const publicAuthRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (
  app,
  { accounts, emailAccounts, rateLimit, basePath },
) => {
  const config = { rateLimit: rateLimit ?? false }
  const loggedIn = (session: Session) => success(loginData(session, basePath))
  const signedIn = (outcome: SignIn) => success(signInData(outcome, basePath))

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
      const { email, password, verification_code: verificationCode } = request.body
      const input =
        verificationCode === undefined ? { email, password } : { email, password, verificationCode }
      return loggedIn(await accounts.register(input, requestContext(request)))
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
          'Checks the password and answers the account and a new token pair; the new refresh token replaces any stored one. A wrong e-mail and a wrong password get the same 401, so no account can be found out. Failed logins are limited per client address and slowed per e-mail (429 with Retry-After). An account with a second factor gets `mfa_required: true` and a ticket instead of tokens: POST /auth/mfa/verify completes the sign-in.',
        security: PUBLIC,
        body: LoginBody,
        response: loginResponses(),
      },
    },
    async (request) => signedIn(await accounts.login(request.body, requestContext(request))),
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

  app.post(
    '/auth/email/send-code',
    {
      config,
      schema: {
        operationId: 'sendCode',
        tags: ['auth'],
        summary: 'Mail a one-time code to an address',
        description:
          'Mails a six-digit code for registering the address, signing in to its account, or resetting its password. The answer is the same whether or not the address has an account: a `login` or `reset_password` code for an address without one is never sent, and a `register` code for an address that has one is replaced by a mail saying so. A code is good for EMAIL_CODE_TTL_SECONDS, once, for five tries; a new one leaves those sent before it good. A `reset_password` mail also carries a reset key, good as long as its code, which wrong tries do not use up (and, with PASSWORD_RESET_URL, a link with it). At most one send per address and purpose every EMAIL_CODE_RESEND_SECONDS, and a quarter of EMAIL_CODE_HOURLY_LIMIT (rounded up) per address and purpose in each quarter of an hour (429 with Retry-After).',
        security: PUBLIC,
        body: SendCodeBody,
        response: sendCodeResponses(),
      },
    },
    async (request) => {
      const { email, purpose } = request.body
      await emailAccounts.sendPublicCode(email, purpose, requestContext(request))
      return success(null)
    },
  )

  app.post(
    '/auth/login/email-code',
    {
      config,
      schema: {
        operationId: 'loginWithCode',
        tags: ['auth'],
        summary: 'Log in with a code mailed to the address',
        description:
          "Answers like POST /auth/login. A wrong, expired or used code and an address without an account get the same 401. Proving an unverified account's address ends what was set up before the proof: its sessions, and the password set before it (docs/api.md §4.15).",
        security: PUBLIC,
        body: CodeLoginBody,
        response: codeLoginResponses(),
      },
    },
    async (request) => {
      const { email, verification_code: code } = request.body
      return signedIn(await emailAccounts.loginWithCode(email, code, requestContext(request)))
    },
  )

  app.post(
    '/auth/password/reset',
    {
      config,
      schema: {
        operationId: 'resetPassword',
        tags: ['auth'],
        summary: 'Set a new password with a code or reset key mailed to the address',
        description:
          'Sets the new password, ends every session of the account, mails a notice, and answers like POST /auth/login with a new session. `verification_code` is the code of a reset mail or the reset key beside it: six digits are checked against the codes only (a wrong one counts a try on each), anything else against the reset keys only (a wrong one uses up nothing). The right code or key uses up every code and key of the address. A code or key that is wrong, expired or used, or an address without an account, is the same 400. For an account with a second factor, the password is set and every session ended all the same, but the answer is the challenge of POST /auth/login, without tokens.',
        security: PUBLIC,
        body: ResetPasswordBody,
        response: resetPasswordResponses(),
      },
    },
    async (request) => {
      const { email, verification_code: code, new_password: newPassword } = request.body
      const input = { email, code, newPassword }
      return signedIn(await emailAccounts.resetPassword(input, requestContext(request)))
    },
  )
}

/** What the protected routes need beside the public ones'. */
export type ProtectedAuthRoutesOptions = AuthRoutesOptions & {
  sessions: SessionService
  profiles: ProfileService
}

/**
 * spec 4.6 and docs/api.md §4.7 (GET /auth/me), §4.11 (GET /auth/sessions): registered inside the scope that runs
 * the authentication guard. They read, or log out as the specification says: stateless (R3.8).
 */
export const protectedAuthRoutes: FastifyPluginAsyncTypebox<ProtectedAuthRoutesOptions> = async (
  app,
  { accounts, sessions, basePath },
) => {
  const account = (value: Account) => success(accountData(value, basePath))
  app.post(
    '/auth/delete-refresh-token',
    {
      schema: {
        operationId: 'logout',
        tags: ['auth'],
        summary: "Log out: end the caller's session",
        description:
          "Ends the caller's session, so that its refresh token no longer works; with `scope=others` the caller's other sessions instead, with `scope=all` every one of them (both need the caller's own session to exist still, else 401). Takes no body. Access tokens of an ended session still read until they expire, but change nothing.",
        security: BEARER_AUTH,
        querystring: LogoutQuery,
        response: logoutResponses(),
      },
    },
    async (request) => {
      const scope = request.query.scope ?? 'current'
      // the specification's logout takes any valid access token; ending other sessions needs a live one (R4.6.4)
      if (scope !== 'current') await sessions.requireLive(callerOf(request))
      await sessions.logout(callerOf(request), scope, requestContext(request))
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
      const list = await sessions.list(callerOf(request))
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

  app.get(
    '/auth/me',
    {
      schema: {
        operationId: 'getCurrentUser',
        tags: ['auth'],
        summary: 'The authenticated account',
        description:
          'The account the access token names, with every field of an account: its address and whether it is verified, its profile, avatar, role, status, providers and times. A token whose account no longer exists is a 401.',
        security: BEARER_AUTH,
        response: meResponses(),
      },
    },
    async (request) => account(await accounts.me(request.userId)),
  )
}

/**
 * docs/api.md §4.12, §4.14 (the protected codes) to §4.22: every protected endpoint that changes the account or its
 * sessions. Registered inside the scope that checks, beside the guard, that the token's session still exists
 * (R5.3.1).
 */
export const accountChangeRoutes: FastifyPluginAsyncTypebox<ProtectedAuthRoutesOptions> = async (
  app,
  { emailAccounts, sessions, profiles, rateLimit, basePath },
) => {
  const config = { rateLimit: rateLimit ?? false }
  const loggedIn = (session: Session) => success(loginData(session, basePath))
  const account = (value: Account) => success(accountData(value, basePath))

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        operationId: 'endSession',
        tags: ['auth'],
        summary: "End one of the caller's sessions",
        description:
          "Ends the session: its refresh token no longer works, and its access tokens change nothing more (they still read until they expire). An id that is not one of the caller's sessions is a 404, whether it exists or not. The caller's own session must still exist, else 401.",
        security: BEARER_AUTH,
        params: SessionParams,
        response: endSessionResponses(),
      },
    },
    async (request) => {
      if (!(await sessions.end(callerOf(request), request.params.id, requestContext(request)))) {
        throw new SessionNotFoundError()
      }
      return success(null)
    },
  )

  app.post(
    '/auth/me/send-code',
    {
      config,
      schema: {
        operationId: 'sendAccountCode',
        tags: ['auth'],
        summary: "Mail a one-time code for a change to the caller's account",
        description:
          "Mails a six-digit code to the account's address (verify_email, delete_account) or to `new_email` (change_email). Same lifetime, tries and send limits as POST /auth/email/send-code.",
        security: BEARER_AUTH,
        body: SendAccountCodeBody,
        response: sendAccountCodeResponses(),
      },
    },
    async (request) => {
      const { purpose, new_email: newEmail } = request.body
      await emailAccounts.sendAccountCode(
        callerOf(request),
        purpose,
        newEmail ?? null,
        requestContext(request),
      )
      return success(null)
    },
  )

  app.post(
    '/auth/password/change',
    {
      config,
      schema: {
        operationId: 'changePassword',
        tags: ['auth'],
        summary: 'Change the password',
        description:
          'Checks the current password, sets the new one, ends every other session, mails a notice, and answers like POST /auth/login with the session the client goes on with. A wrong current password is a 400 (the access token is good). An account without a usable password sets one by reset.',
        security: BEARER_AUTH,
        body: ChangePasswordBody,
        response: changePasswordResponses(),
      },
    },
    async (request) => {
      const { current_password: currentPassword, new_password: newPassword } = request.body
      const input = { currentPassword, newPassword }
      return loggedIn(await emailAccounts.changePassword(callerOf(request), input, requestContext(request)))
    },
  )

  app.post(
    '/auth/email/change',
    {
      config,
      schema: {
        operationId: 'changeEmail',
        tags: ['auth'],
        summary: "Change the account's address",
        description:
          'With a change_email code sent to the new address: the account takes it, verified, and the old address gets a notice. Another account with that address is a 409.',
        security: BEARER_AUTH,
        body: ChangeEmailBody,
        response: changeEmailResponses(),
      },
    },
    async (request) => {
      const { new_email: newEmail, verification_code: code } = request.body
      const changed = await emailAccounts.changeEmail(
        callerOf(request),
        { newEmail, code },
        requestContext(request),
      )
      return account(changed)
    },
  )

  app.post(
    '/auth/email/verify',
    {
      config,
      schema: {
        operationId: 'verifyEmail',
        tags: ['auth'],
        summary: "Prove the account's address",
        description: "With a verify_email code sent to the account's address: email_verified becomes true.",
        security: BEARER_AUTH,
        body: VerifyEmailBody,
        response: verifyEmailResponses(),
      },
    },
    async (request) => {
      const code = request.body.verification_code
      return account(await emailAccounts.verifyEmail(callerOf(request), code, requestContext(request)))
    },
  )

  app.put(
    '/auth/profile',
    {
      config,
      schema: {
        operationId: 'updateProfile',
        tags: ['auth'],
        summary: "Change the caller's profile",
        description:
          'Sets `username`, `nickname` and `bio`: a string sets one, null clears it, an absent one is left as it is. A username is lower-cased; another account with it is a 409.',
        security: BEARER_AUTH,
        body: ProfileBody,
        response: profileResponses(),
      },
    },
    async (request) => account(await profiles.update(request.userId, request.body, requestContext(request))),
  )

  app.post(
    '/auth/delete',
    {
      config,
      schema: {
        operationId: 'deleteAccount',
        tags: ['auth'],
        summary: 'Delete the account',
        description:
          'With the password, or a delete_account code: removes the account, its sessions, codes and queued mail. The audit trail keeps its events without their client addresses.',
        security: BEARER_AUTH,
        body: DeleteAccountBody,
        response: deleteAccountResponses(),
      },
    },
    async (request) => {
      await emailAccounts.deleteAccount(callerOf(request), holderProof(request.body), requestContext(request))
      return success(null)
    },
  )
}
