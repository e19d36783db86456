import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { FactorNotFoundError, ValidationError } from '../errors.js'
import { loginData } from '../http/account-data.js'
import { callerOf } from '../http/authenticate.js'
import { success } from '../http/envelope.js'
import {
  factorsResponses,
  mfaVerifyResponses,
  recoveryCodesResponses,
  removeFactorResponses,
  totpConfirmResponses,
  totpSetupResponses,
} from '../http/mfa-responses.js'
import { FactorParams, HolderProofBody, MfaVerifyBody, TotpConfirmBody } from '../http/schemas.js'
import { message } from '../language/message.js'
import type { MfaService } from '../mfa/mfa-service.js'
import { BEARER_AUTH, holderProof, PUBLIC, requestContext } from './route-parts.js'

const FACTOR_ID = /^[0-9a-f]{32}$/

export interface MfaRoutesOptions {
  mfa: MfaService
  /** R8.1's per-route limit, as the other public endpoints have it; null when limiting is off. */
  rateLimit: { max: number; timeWindow: number } | null
  /** BASE_PATH, for the avatar paths of the login answer. */
  basePath: string
}

/** docs/api.md §4.25: the second step of a sign-in. */
export const publicMfaRoutes: FastifyPluginAsyncTypebox<MfaRoutesOptions> = async (
  app,
  { mfa, rateLimit, basePath },
) => {
  app.post(
    '/auth/mfa/verify',
    {
      config: { rateLimit: rateLimit ?? false },
      schema: {
        operationId: 'verifySecondFactor',
        tags: ['mfa'],
        summary: 'Complete a sign-in with a second factor',
        description:
          'Completes the challenge that a first factor answered (`mfa_required`) with the six digits of the authenticator app or one of the recovery codes, and answers like POST /auth/login with a session established with both factors. A code is accepted once (across instances); one time step of clock drift either way is accepted. Any refusal (a wrong or replayed code, a ticket that is unknown, used, expired or out of its five tries, an account that can no longer sign in) is one 401. Wrong codes count against the account as wrong passwords do.',
        security: PUBLIC,
        body: MfaVerifyBody,
        response: mfaVerifyResponses(),
      },
    },
    async (request) => {
      const { mfa_ticket: ticket, code, recovery_code: recoveryCode } = request.body
      if ((code === undefined) === (recoveryCode === undefined))
        throw new ValidationError([{ field: '/code', message: message('field.code_or_recovery_code') }])
      const proof = code === undefined ? { recoveryCode: recoveryCode as string } : { code }
      return success(loginData(await mfa.verify(ticket, proof, requestContext(request)), basePath))
    },
  )
}

/** docs/api.md §4.25: the caller's factors, read statelessly like GET /auth/sessions (R3.8). */
export const protectedMfaRoutes: FastifyPluginAsyncTypebox<MfaRoutesOptions> = async (app, { mfa }) => {
  app.get(
    '/auth/mfa/factors',
    {
      schema: {
        operationId: 'listFactors',
        tags: ['mfa'],
        summary: "The caller's second factors",
        description:
          'The confirmed factors of the account (authenticator apps and passkeys), oldest first. A pending authenticator not confirmed yet is not listed.',
        security: BEARER_AUTH,
        response: factorsResponses(),
      },
    },
    async (request) => {
      const { factors } = await mfa.factors(request.userId)
      return success(
        factors.map((factor) => ({
          id: factor.id,
          type: factor.type,
          name: factor.name,
          created_at: factor.createdAt,
          last_used_at: factor.lastUsedAt,
        })),
      )
    },
  )
}

/** docs/api.md §4.25: adding and removing factors, in the scope that checks the caller's session is live (R5.3.1). */
export const mfaChangeRoutes: FastifyPluginAsyncTypebox<MfaRoutesOptions> = async (
  app,
  { mfa, rateLimit },
) => {
  const config = { rateLimit: rateLimit ?? false }

  app.post(
    '/auth/mfa/totp/setup',
    {
      config,
      schema: {
        operationId: 'setUpTotp',
        tags: ['mfa'],
        summary: 'Start adding an authenticator app',
        description:
          "With the account's password, or a code of purpose manage_factors for an account without one, and a verified address (else 403): a pending factor, its secret, the otpauth:// URI and that URI as a QR code. It counts for nothing until POST /auth/mfa/totp/confirm; one not confirmed within an hour is removed.",
        security: BEARER_AUTH,
        body: HolderProofBody,
        response: totpSetupResponses(),
      },
    },
    async (request) => {
      const setup = await mfa.setupTotp(callerOf(request), holderProof(request.body), requestContext(request))
      return success({
        factor_id: setup.factorId,
        secret: setup.secret,
        uri: setup.uri,
        qr_code: setup.qrCode,
      })
    },
  )

  app.post(
    '/auth/mfa/totp/confirm',
    {
      config,
      schema: {
        operationId: 'confirmTotp',
        tags: ['mfa'],
        summary: 'Confirm an authenticator app with its code',
        description:
          "The app's current code confirms the pending factor: from then on every first factor of the account asks for a second one. The caller's session counts as established with the second factor, every other session of the account ends, a notice is mailed, and the answer carries ten recovery codes, shown this once (an earlier set is void).",
        security: BEARER_AUTH,
        body: TotpConfirmBody,
        response: totpConfirmResponses(),
      },
    },
    async (request) => {
      const { factor_id: factorId, code } = request.body
      const codes = await mfa.confirmTotp(callerOf(request), factorId, code, requestContext(request))
      return success({ recovery_codes: codes })
    },
  )

  app.delete(
    '/auth/mfa/factors/:id',
    {
      config,
      schema: {
        operationId: 'removeFactor',
        tags: ['mfa'],
        summary: 'Remove a second factor',
        description:
          "Needs a session established with the second factor (else 403). Removing the last factor turns the second step off and voids the recovery codes. Every other session of the account ends, and a notice is mailed. An id that is not one of the caller's factors is a 404.",
        security: BEARER_AUTH,
        params: FactorParams,
        response: removeFactorResponses(),
      },
    },
    async (request) => {
      const { id } = request.params
      // an id no factor can have is no factor of the caller's
      if (!FACTOR_ID.test(id)) throw new FactorNotFoundError()
      await mfa.removeFactor(callerOf(request), id, requestContext(request))
      return success(null)
    },
  )

  app.post(
    '/auth/mfa/recovery-codes',
    {
      config,
      schema: {
        operationId: 'newRecoveryCodes',
        tags: ['mfa'],
        summary: 'Replace the recovery codes',
        description:
          'Needs a session established with the second factor (else 403): ten new recovery codes, shown this once; the old ones no longer work.',
        security: BEARER_AUTH,
        response: recoveryCodesResponses(),
      },
    },
    async (request) =>
      success({ recovery_codes: await mfa.newRecoveryCodes(callerOf(request), requestContext(request)) }),
  )
}
