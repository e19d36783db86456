import type { FastifyRequest } from 'fastify'
import type { LoginContext } from '../auth/account-service.js'
import { ValidationError } from '../errors.js'
import { languageOf } from '../http/answer-language.js'
import type { HolderProofBody } from '../http/schemas.js'
import { message } from '../language/message.js'

// What the route modules share: the API document's security requirements, whom a request is for, and the proof
// that the account holder is present.

/** The API document's security requirements: none for a public operation, the access token for a protected one. */
export const PUBLIC: [] = []
export const BEARER_AUTH = [{ bearerAuth: [] }]

/**
 * Whom the services work for, built once per request: the one place the client address goes in (the login throttle,
 * the Argon2 queue and the security events read it from there; docs/api.md R8.2 to R8.6, "Audit events"). An HTTP
 * request always has both its address and its id.
 */
export const requestContext = (request: FastifyRequest): LoginContext => ({
  clientAddress: request.ip,
  requestId: request.id,
  userAgent: request.headers['user-agent'] ?? null,
  // a mail the request causes is written in the language of its answers (docs/api.md R1.18)
  language: languageOf(request.headers),
})

/**
 * Exactly one of `password` and `verification_code` (POST /auth/delete, and adding a second factor, docs/api.md
 * §4.21, §4.25); neither or both is the 400 of R4.21.2 on `/password`.
 */
export function holderProof(body: HolderProofBody): { password: string } | { code: string } {
  const { password, verification_code: code } = body
  if ((password === undefined) === (code === undefined))
    throw new ValidationError([{ field: '/password', message: message('field.password_or_code') }])
  return password === undefined ? { code: code as string } : { password }
}
