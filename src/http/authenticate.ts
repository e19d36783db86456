import type { FastifyReply, FastifyRequest } from 'fastify'
import type { TokenService } from '../auth/token-service.js'
import { AuthorizationMalformedError, AuthorizationMissingError } from '../errors.js'
import type { Caller } from '../sessions/caller.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated user's id (claim `sub`); set by the guard on protected routes only. */
    userId: string
    /** The access token's session (claim `sid`; docs/api.md §2.3), null when it has none; set with userId. */
    sessionId: string | null
    /** The session tag of the access token's `jti` (docs/api.md R2.3.3), null when it has none; set with userId. */
    sessionTag: string | null
  }
}

/** The access token's account and session, as the guard read them. */
export const callerOf = (request: FastifyRequest): Caller => ({
  userId: request.userId,
  sessionId: request.sessionId,
  sessionTag: request.sessionTag,
})

/** spec 5.2 / docs/api.md R5.2.2: exactly "Bearer", one space, then a token without spaces. */
const BEARER = /^Bearer ([^\s]+)$/

/**
 * The first two checks of spec 5.2: the token of an `Authorization: Bearer <token>` header. Also the verifier's that
 * fetches keys (src/verifier), which runs the token's checks once it has them.
 */
export function bearerToken(header: string | undefined): string {
  if (header === undefined) throw new AuthorizationMissingError()
  const match = BEARER.exec(header)
  if (match?.[1] === undefined) throw new AuthorizationMalformedError()
  return match[1]
}

/**
 * The guard of protected routes, as an onRequest hook: spec 5.2's four checks in order (header present, Bearer form,
 * signature and expiry, token_type Access), each failure a 401 with its own message. The verifier other services use
 * (src/verifier) runs the same two steps.
 */
export function createAuthenticate(tokens: Pick<TokenService, 'verifyAccessSubject'>) {
  // a callback hook: the checks are synchronous, and a promise per request would cost more than they do
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    try {
      const subject = tokens.verifyAccessSubject(bearerToken(request.headers.authorization))
      request.userId = subject.userId
      request.sessionId = subject.sessionId
      request.sessionTag = subject.sessionTag
    } catch (error) {
      done(error as Error)
      return
    }
    done()
  }
}
