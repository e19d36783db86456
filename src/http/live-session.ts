import type { FastifyRequest } from 'fastify'
import type { SessionService } from '../sessions/session-service.js'
import { callerOf } from './authenticate.js'

/**
 * docs/api.md R5.3.1, as a preValidation hook of the scope of every endpoint that changes the account or its
 * sessions: the access token's session must still exist, or the request is the 401 of an expired token, before its
 * body is validated or anything is read. Reading endpoints stay stateless (R3.8).
 */
export function createLiveSessionCheck(sessions: Pick<SessionService, 'requireLive'>) {
  return (request: FastifyRequest): Promise<void> => sessions.requireLive(callerOf(request))
}
