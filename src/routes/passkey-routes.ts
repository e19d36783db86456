import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { loginData } from '../http/account-data.js'
import { callerOf } from '../http/authenticate.js'
import { success } from '../http/envelope.js'
import {
  passkeyLoginOptionsResponses,
  passkeyLoginResponses,
  passkeyRegisterResponses,
  passkeyRegistrationOptionsResponses,
} from '../http/passkey-responses.js'
import {
  HolderProofBody,
  PasskeyLoginBody,
  PasskeyLoginOptionsBody,
  PasskeyRegisterBody,
} from '../http/schemas.js'
import type { PasskeyService } from '../mfa/passkeys.js'
import { BEARER_AUTH, holderProof, PUBLIC, requestContext } from './route-parts.js'

export interface PasskeyRoutesOptions {
  passkeys: PasskeyService
  /** R8.1's per-route limit, as the other public endpoints have it; null when limiting is off. */
  rateLimit: { max: number; timeWindow: number } | null
  /** BASE_PATH, for the avatar paths of the login answer. */
  basePath: string
}

/** docs/api.md §4.26: signing in with a passkey, by itself or as the second step of a sign-in. */
export const publicPasskeyRoutes: FastifyPluginAsyncTypebox<PasskeyRoutesOptions> = async (
  app,
  { passkeys, rateLimit, basePath },
) => {
  const config = { rateLimit: rateLimit ?? false }

  app.post(
    '/auth/passkeys/login/options',
    {
      config,
      schema: {
        operationId: 'passkeyLoginOptions',
        tags: ['mfa'],
        summary: 'Start signing in with a passkey',
        description:
          'The options for navigator.credentials.get() and a ticket for their challenge, good once for five minutes. No allowCredentials: the browser offers the passkeys it holds for the relying party, and the one chosen names its account, so no e-mail address is asked. Without `mfa_ticket` user verification is required (the passkey is both factors); with it, for the second step of a sign-in, it is preferred. The body is a JSON object, `{}` at least.',
        security: PUBLIC,
        body: PasskeyLoginOptionsBody,
        response: passkeyLoginOptionsResponses(),
      },
    },
    async (request) => {
      const start = await passkeys.loginOptions(request.body.mfa_ticket !== undefined)
      return success({ ticket: start.ticket, options: start.options })
    },
  )

  app.post(
    '/auth/passkeys/login/verify',
    {
      config,
      schema: {
        operationId: 'passkeyLogin',
        tags: ['mfa'],
        summary: 'Sign in with a passkey',
        description:
          "The assertion (PublicKeyCredential.toJSON()) for the ticket's challenge, from FRONTEND_ORIGIN or PUBLIC_URL's origin, for the relying party WEBAUTHN_RP_ID. Without `mfa_ticket`: a sign-in by the passkey alone, which needs user verification; with it: the second step of that challenge, whose account the passkey must be. Either way a login answer like POST /auth/login's, with a session established with the second factor. The passkey's signature counter must go forward (when either it or the stored one is not zero); one that went backwards is refused and recorded. Any refusal is one 401, and uses up the ticket; with `mfa_ticket` it also counts one of the challenge's five tries.",
        security: PUBLIC,
        body: PasskeyLoginBody,
        response: passkeyLoginResponses(),
      },
    },
    async (request) => {
      const { ticket, credential, mfa_ticket: mfaTicket } = request.body
      const session = await passkeys.login(ticket, credential, mfaTicket ?? null, requestContext(request))
      return success(loginData(session, basePath))
    },
  )
}

/** docs/api.md §4.26: adding a passkey, in the scope that checks the caller's session is live (R5.3.1). */
export const passkeyChangeRoutes: FastifyPluginAsyncTypebox<PasskeyRoutesOptions> = async (
  app,
  { passkeys, rateLimit },
) => {
  const config = { rateLimit: rateLimit ?? false }

  app.post(
    '/auth/passkeys/register/options',
    {
      config,
      schema: {
        operationId: 'passkeyRegistrationOptions',
        tags: ['mfa'],
        summary: 'Start adding a passkey',
        description:
          "With the account's password, or a code of purpose manage_factors for an account without one, and a verified address (else 403): the options for navigator.credentials.create() (a discoverable credential, user verification preferred, the account's passkeys excluded, attestation none) and a ticket for their challenge, good once for five minutes.",
        security: BEARER_AUTH,
        body: HolderProofBody,
        response: passkeyRegistrationOptionsResponses(),
      },
    },
    async (request) => {
      const start = await passkeys.registrationOptions(
        callerOf(request),
        holderProof(request.body),
        requestContext(request),
      )
      return success({ ticket: start.ticket, options: start.options })
    },
  )

  app.post(
    '/auth/passkeys/register/verify',
    {
      config,
      schema: {
        operationId: 'passkeyRegister',
        tags: ['mfa'],
        summary: 'Add a passkey',
        description:
          "The new credential (PublicKeyCredential.toJSON()) for the ticket's challenge, from FRONTEND_ORIGIN or PUBLIC_URL's origin, for the relying party WEBAUTHN_RP_ID. It is stored as a factor of the account: from then on every first factor of the account asks for a second one, and the passkey signs in by itself. The caller's session counts as established with the second factor, every other session of the account ends, and a notice is mailed.",
        security: BEARER_AUTH,
        body: PasskeyRegisterBody,
        response: passkeyRegisterResponses(),
      },
    },
    async (request) => {
      const { ticket, credential, name } = request.body
      const factor = await passkeys.register(
        callerOf(request),
        ticket,
        credential,
        name ?? null,
        requestContext(request),
      )
      return success({
        id: factor.id,
        type: factor.type,
        name: factor.name,
        created_at: factor.createdAt,
        last_used_at: factor.lastUsedAt,
      })
    },
  )
}
