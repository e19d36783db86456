import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError } from '../errors.js'
import { languageHeaders, languageOf } from '../http/answer-language.js'
import { failure } from '../http/envelope.js'
import { type AccessTokenGuardOptions, guardVerifier, settle } from './guard-options.js'

declare global {
  // Express's own request type (@types/express), when the application uses it
  namespace Express {
    interface Request {
      /** The authenticated user's id (claim `sub`); set on the routes a Tessera access-token middleware protects. */
      userId: string
      /** The authenticated user's role (claim `role`; `user` when the token carries none); set with `userId`. */
      userRole: string
    }
  }
}

/** A Node request that passed the middleware. */
export type AuthenticatedRequest = IncomingMessage & { userId: string; userRole: string }

/** A middleware in the shape Express, Connect and a plain `node:http` handler share. */
export type AccessTokenMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void

/**
 * An Express-compatible middleware that protects the routes it is mounted on with Tessera's access tokens: the
 * checks of spec 5.2, the user id on `req.userId`, its role on `req.userRole`, and `next()`, or a refusal answered as the service answers it (401,
 * its JSON envelope and message, `WWW-Authenticate`) without calling `next`.
 */
export function createAccessTokenMiddleware(options: AccessTokenGuardOptions): AccessTokenMiddleware {
  const verifier = guardVerifier(options)
  return (req, res, next) => {
    settle(
      verifier,
      req.headers.authorization,
      (access) => {
        const authenticated = req as AuthenticatedRequest
        authenticated.userId = access.userId
        authenticated.userRole = access.role
        next()
      },
      (error) => {
        if (error instanceof AppError) sendRefusal(res, error, languageOf(req.headers))
        else next(error)
      },
    )
  }
}

/** The refusal's envelope, in the request's language (docs/api.md §1.5), as the service writes it. */
function sendRefusal(res: ServerResponse, error: AppError, language: string): void {
  const body = JSON.stringify(failure(error, language))
  res.writeHead(error.statusCode, {
    ...error.headers,
    ...languageHeaders(language, res.getHeader('vary')),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  })
  res.end(body)
}
